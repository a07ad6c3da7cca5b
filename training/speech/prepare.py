"""Extract real/synthetic speech from public demo repositories (bare git snapshots made by `fetch`),
label each clip with its system from the page's folder/file names, decode to 16 kHz mono float32 and
write /work/data/speech/clips.npz + training/speech/manifest.json.
Resemblyzer: ONLY audio_data/librispeech_train-clean-100 (donald_trump, librispeech_test-other are reserved)."""
import json, os, re, subprocess, sys, numpy as np
from functools import partial
M = '/work/.mirror'
FF = '/work/main/node_modules/@ffmpeg-installer/linux-x64/ffmpeg'
OUT = os.environ.get('SPEECH_DATA', '/work/data/speech')  # v3: SPEECH_DATA=/work/data/speech-v3
SOURCES = {  # repo: (mirror dir, git ref, path prefixes, licence)
  'MobileSpeech/MobileSpeech.github.io': ('MobileSpeech+MobileSpeech.github.io', 'HEAD', ['assets/audios/waves/'], 'CC0-1.0'),
  'styletts2/styletts2.github.io': ('styletts2+styletts2.github.io', 'HEAD', ['wavs/'], 'see repo LICENSE (demo page)'),
  'jik876/hifi-gan-demo': ('jik876+hifi-gan-demo', 'HEAD', ['samples/'], 'demo page, no licence file (research use)'),
  'coqui-ai/TTS': ('coqui-ai+TTS', 'HEAD', ['tests/data/ljspeech/wavs/'], 'MPL-2.0 (LJSpeech clips public domain)'),
  'RUB-SysSec/WaveFake': ('RUB-SysSec+WaveFake', 'HEAD', ['tests/sample_data/'], 'see repo (LJSpeech public domain)'),
  'resemble-ai/Resemblyzer': ('resemble-ai+Resemblyzer', 'HEAD', ['audio_data/librispeech_train-clean-100/'], 'Apache-2.0 repo; LibriSpeech CC-BY-4.0'),
  # v2 sources (stop 24): more vocoders/TTS systems and more varied bona fide speech
  'kan-bayashi/ParallelWaveGAN': ('kan-bayashi+ParallelWaveGAN', 'gh-pages', ['wav/'], 'MIT (repo); LJSpeech public domain, JSUT/CSMSC research use'),
  'jaywalnut310/vits-demo': ('jaywalnut310+vits-demo', 'HEAD', ['wavs/'], 'demo page, no licence file (research use)'),
  'jaywalnut310/glow-tts-demo': ('jaywalnut310+glow-tts-demo', 'HEAD', ['wavs/'], 'demo page, no licence file (research use)'),
  'wavegrad/wavegrad.github.io': ('wavegrad+wavegrad.github.io', 'HEAD', ['baselines/', 'wavs/', 'wavs2/', 'v2/wavs/', 'specgrad/data/'], 'demo page, no licence file (research use)'),
  'diffwave-demo/diffwave-demo.github.io': ('diffwave-demo+diffwave-demo.github.io', 'HEAD', ['samples/'], 'demo page, no licence file (research use)'),
  'bigvgan-demo/bigvgan-demo.github.io': ('bigvgan-demo+bigvgan-demo.github.io', 'HEAD', ['samples/'], 'demo page, no licence file (research use)'),
  'r9y9/r9y9.github.io': ('r9y9+r9y9.github.io', 'HEAD', ['audio/icassp2020/', 'audio/icassp2021-pwg-vuvd/'], 'demo page, no licence file (research use)'),
  'SpeechResearch/speechresearch.github.io': ('SpeechResearch+speechresearch.github.io', 'HEAD', ['audio/fastspeech/audio/', 'audio/fastspeech2/audio/', 'audio/priorgrad/', 'audio/naturalspeech/', 'naturalspeech2/audio/', 'naturalspeech3/audio/zstts/', 'naturalspeech3/audio/recon/'], 'demo pages, no licence file (research use)'),
  'neonbjb/tortoise-tts': ('neonbjb+tortoise-tts', 'HEAD', ['tortoise/voices/', 'examples/'], 'Apache-2.0'),
}
# family of every system label; train.py holds whole systems out by name
FAMILY = {
  'gtcodec': 'codec', 'megatts': 'zeroshot', 'mobilespeech': 'zeroshot', 'valle': 'zeroshot', 'yourtts': 'zeroshot',
  'jets': 'e2e', 'vits': 'e2e', 'naturalspeech': 'e2e', 'styletts': 'styletts', 'styletts2': 'styletts',
  'naturalspeech2': 'diffusion', 'fastdiff': 'diffusion', 'hifigan': 'hifigan', 'melgan': 'melgan',
  'waveglow': 'autoregressive-flow', 'wavenet': 'autoregressive-flow', 'wavefake-melgan': 'melgan',
  'pwg': 'gan', 'mb-melgan': 'melgan', 'fb-melgan': 'melgan', 'style-melgan': 'melgan', 'univnet': 'gan', 'bigvgan': 'gan',
  'waveflow': 'flow', 'clarinet': 'iaf', 'clarinet-gan': 'iaf', 'wavernn': 'autoregressive-flow',
  'glowtts-waveglow': 'autoregressive-flow', 'tacotron2-waveglow': 'autoregressive-flow',
  'tacotron2-hifigan': 'two-stage', 'glowtts-hifigan': 'two-stage', 'glowtts': 'two-stage', 'fastspeech2': 'two-stage',
  'fastspeech': 'two-stage', 'tacotron2': 'two-stage', 'transformertts': 'two-stage',
  'diffwave': 'diffusion', 'wavegrad': 'diffusion', 'wavegrad2': 'diffusion', 'priorgrad': 'diffusion', 'specgrad': 'diffusion',
  'priorgrad-acoustic': 'two-stage', 'gradtts': 'two-stage',  # diffusion acoustic models before a GAN vocoder
  'naturalspeech3': 'diffusion',
  'hierspeechpp': 'zeroshot', 'voicebox': 'zeroshot', 'uniaudio': 'zeroshot', 'tortoise': 'zeroshot',
  'dac': 'codec', 'encodec': 'codec', 'hificodec': 'codec', 'soundstream': 'codec', 'facodec': 'codec',
}
BIGVGAN_SPEECH = {'celeb1', 'celeb2', 'korean', 'korean2', 'ltclean1', 'ltclean2', 'ltclean3', 'ltother1', 'ltother2', 'ltother3', 'noisytedx1', 'noisytedx2', 'tedx1', 'tedx2'}  # the rest of that page is music
TORTOISE_VOICES = {'angelina': 'angie', 'craig': 'daniel', 'grace_train': 'train_grace'}  # aliases of one reference voice
def syn(s, g): return 1, s, FAMILY[s], g
def label(repo, p):
  """returns (label 0 real / 1 synthetic, system, family, speaker/source group) or None to skip"""
  f = os.path.basename(p); d = os.path.dirname(p); stem = os.path.splitext(f)[0]
  if repo.startswith('MobileSpeech'):
    m = re.match(r'assets/audios/waves/(\d+)/(\w+)\.wav$', p)
    if not m: return None
    s = m.group(2); g = 'mobilespeech-' + m.group(1)
    if s == 'gtexample': return 0, 'gt', 'real', g
    return syn(s, g)
  if repo.startswith('styletts2'):
    parts = d.split('/')[1:]
    last = parts[-1]
    corpus = parts[0]
    if last in ('GT', 'Ref'): return 0, 'gt', 'real', 'styletts-' + corpus
    if corpus == 'Variation' and last == 'LibriTTS': return None  # ambiguous on the page
    sysmap = {'JETS': 'jets', 'VITS': 'vits', 'NaturalSpeech': 'naturalspeech', 'StyleTTS': 'styletts', 'StyleTTS2': 'styletts2',
              'VallE': 'valle', 'YourTTS': 'yourtts', 'NaturalSpeech2': 'naturalspeech2', 'FastDiff': 'fastdiff'}
    if last in sysmap: return syn(sysmap[last], 'styletts-' + corpus)
    if corpus in ('Ablation', 'Emotion', 'Long', 'abstract'): return syn('styletts2', 'styletts-' + corpus)
    return None
  if repo.startswith('jik876'):
    parts = d.split('/'); sec, s = parts[1], parts[2]
    if s == 'GT': return 0, 'gt', 'real', 'hifigan-' + sec
    if s.startswith('HGAN') or sec in ('as', 'as3') or s == 'V1_500': return syn('hifigan', 'hifigan-' + sec)
    if s.startswith('MG'): return syn('melgan', 'hifigan-' + sec)
    if s.startswith('WG'): return syn('waveglow', 'hifigan-' + sec)
    if s == 'WN': return syn('wavenet', 'hifigan-' + sec)
    return None
  if repo.startswith('coqui'): return 0, 'gt', 'real', 'ljspeech'
  if repo.startswith('RUB'):
    if '/generated/' in p: return syn('wavefake-melgan', 'ljspeech')
    return 0, 'gt', 'real', 'ljspeech'
  if repo.startswith('resemble'):
    assert 'librispeech_train-clean-100' in p
    return 0, 'gt', 'real', 'librispeech-' + f.split('-')[0]
  if repo.startswith('kan-bayashi'):  # wav/<corpus>/<author>_<vocoder>/<utt>.wav
    corpus, s = d.split('/')[1:3]
    g = 'ljspeech' if corpus == 'ljspeech' else 'pwg-' + corpus
    if s == 'raw': return 0, 'gt', 'real', g
    s = s.split('_', 1)[1].split('.')[0]
    return syn({'wavegan': 'pwg', 'melgan': 'melgan', 'mb-melgan': 'mb-melgan', 'fb-melgan': 'fb-melgan', 'style-melgan': 'style-melgan', 'hifigan': 'hifigan'}[s], g)
  if repo == 'jaywalnut310/vits-demo':  # <section>_<nn>_<system>.wav, columns named on index.html
    m = re.match(r'(ss|ms|sv|as|vc)_\d+_(\w+)$', stem)
    if not m: return None
    sec, s = m.groups(); g = 'vitsdemo-vctk' if sec in ('ms', 'vc') else 'vitsdemo-lj'
    if s == 'gt': return 0, 'gt', 'real', g
    if s in ('th', 'thf'): return syn('tacotron2-hifigan', g)
    if s in ('gh', 'ghf'): return syn('glowtts-hifigan', g)
    if sec == 'vc' or s in ('vits', 'vits_ms', 'dp', 'noflow', 'melpost'): return syn('vits', g)  # VITS, VITS (DDP), its ablations, its voice conversion
    return None
  if repo == 'jaywalnut310/glow-tts-demo':  # lj/lb/hp_<nn>_<column>: GT, GT(WaveGlow), Glow-TTS (T=...), Tacotron 2 in the WaveGlow-vocoded paper section
    m = re.match(r'(lj|lb|hp)_\d+_(gt|wg|taco|ours(_\d)?)$', stem)
    if not m: return None
    g = 'glowdemo-lb' if m.group(1) == 'lb' else 'glowdemo-lj'
    s = m.group(2)
    if s == 'gt': return 0, 'gt', 'real', g
    return syn({'wg': 'waveglow', 'taco': 'tacotron2-waveglow'}.get(s, 'glowtts-waveglow'), g)
  if repo.startswith('wavegrad/'):
    if p.startswith('baselines/'):
      return syn({'WaveGlow': 'waveglow', 'WaveFlow': 'waveflow', 'PWG': 'pwg', 'MelGAN': 'melgan', 'MBMelGAN': 'mb-melgan'}[d.split('/')[2]], 'wavegrad')
    if p.startswith('specgrad/'):  # analysis-synthesis table: <n>_gt, and <n>_{wg,pg,sg}_iter0 = final iteration of WaveGrad, PriorGrad, SpecGrad
      m = re.match(r'(\d+)_(gt|wg_iter0|pg_iter0|sg_iter0)$', stem)
      if not m: return None
      s = m.group(2)
      if s == 'gt': return 0, 'gt', 'real', 'specgrad'
      return syn({'wg': 'wavegrad', 'pg': 'priorgrad', 'sg': 'specgrad'}[s[:2]], 'specgrad')
    v2 = p.startswith('v2/')
    if stem.startswith('ref_'): return None  # the 'Reference' column does not say recording or reference vocoder
    if re.match(r'([CD]\d+|specaug_utt\d+_iter\d+)_?\d*$', stem): return syn('wavegrad2' if v2 else 'wavegrad', 'wavegrad')
    return None  # n0..n6: intermediate refinement steps
  if repo.startswith('diffwave-demo'):
    m = re.match(r'samples/ljspeech-([a-z\-]+?)(_r\d+(_fast)?)?/', p)
    if not m: return None  # SC09 digits, denoiser, interpolation, reverse process
    s = m.group(1)
    if s == 'ground-truth': return 0, 'gt', 'real', 'diffwavedemo'
    return syn({'diffwave': 'diffwave', 'clarinet': 'clarinet', 'waveflow': 'waveflow', 'wavenet': 'wavenet'}[s], 'diffwavedemo')
  if repo.startswith('bigvgan-demo'):
    s = d.split('/')[1]
    if stem not in BIGVGAN_SPEECH: return None
    g = 'bigvgan-' + re.sub(r'\d+$', '', stem)
    if s == 'gt': return 0, 'gt', 'real', g
    return syn({'bigvgan': 'bigvgan', 'bigvgan-base': 'bigvgan', 'mrd_snake': 'bigvgan', 'bighifigan': 'hifigan', 'hifigan': 'hifigan',
                'hifigan_mrd': 'hifigan', 'univnet': 'univnet', 'sc-wavernn': 'wavernn'}[s], g)
  if repo.startswith('r9y9/'):
    m = re.match(r'\[[\w\-]+\]-(?:[RS]?\d+)-(.+)$', stem) or re.match(r'\[\w+\]-\w+_arctic_\w+_(?:ref|gen)-(.+)$', stem)
    if not m: return None
    s = m.group(1); parts = d.split('/')
    g = ('r9y9-jp' if parts[2] != 'LJSpeech' else 'ljspeech') if parts[1] == 'icassp2020' else 'r9y9-' + parts[2] + ('-' + parts[3] if parts[2] == 'bonus' else '')
    if s in ('Ground truth', 'Recording'): return 0, 'gt', 'real', g
    if 'WaveNet' in s: return syn('wavenet', g)  # WaveNet, MoL-WaveNet
    if s.startswith('ClariNet-GAN'): return syn('clarinet-gan', g)
    if s.startswith('ClariNet'): return syn('clarinet', g)
    if s.startswith('Parallel WaveGAN') or s.startswith('PWG'): return syn('pwg', g)
    return None
  if repo.startswith('SpeechResearch'):
    parts = d.split('/')
    if p.startswith('audio/fastspeech/'):  # only the two columns that name their vocoder
      if d.endswith('/gt'): return 0, 'gt', 'real', 'sr-fastspeech'
      if d.endswith('/gt_waveglow'): return syn('waveglow', 'sr-fastspeech')
      return None
    if p.startswith('audio/fastspeech2/'):
      s = parts[-1]
      if s == 'gt_recording_2': return 0, 'gt', 'real', 'sr-fastspeech2'
      if s == 'gt_pwg_2': return syn('pwg', 'sr-fastspeech2')
      if re.match(r'fs2s?(-|$)', s): return syn('fastspeech2', 'sr-fastspeech2')
      return syn({'fs1_kd_attention': 'fastspeech', 'tacotron2': 'tacotron2', 'transtts_2': 'transformertts'}[s], 'sr-fastspeech2')
    if p.startswith('audio/priorgrad/'):
      s = parts[-1]; g = 'sr-priorgrad'
      if s == 'GT': return 0, 'gt', 'real', g
      if s in ('GT_pwg',): return syn('pwg', g)
      if s == 'gt_hfg' or s == 'hifigan': return syn('hifigan', g)
      if s in ('waveglow', 'waveflow'): return syn(s, g)
      if 'vocoder' in d: return syn('priorgrad' if 'priorgrad' in s else 'diffwave', g)  # vocoder_dw/*baseline* is DiffWave
      if s == 'fastspeech2': return syn('fastspeech2', g)
      if s == 'glowtts': return syn('glowtts', g)
      if s.startswith('gradtts'): return syn('gradtts', g)
      if re.match(r'(baseline|priorgrad|priorlearner)_', s): return syn('priorgrad-acoustic', g)  # diffusion acoustic models of the PriorGrad paper
      return None
    if p.startswith('audio/naturalspeech/'):
      if stem.startswith('recording_'): return 0, 'gt', 'real', 'sr-naturalspeech'
      if stem.startswith('naturalspeech_'): return syn('naturalspeech', 'sr-naturalspeech')
      return None
    if p.startswith('naturalspeech2/'):
      if parts[2] not in ('compare_with_valle', 'librispeech_examples', 'vctk_examples'): return None  # se, vc, singing
      g = 'sr-ns2-' + parts[2].split('_')[0] + '-' + parts[3]
      if stem in ('gt', 'reference'): return 0, 'gt', 'real', g
      return syn({'ns': 'naturalspeech2', 'valle': 'valle', 'yourtts': 'yourtts'}[stem], g)
    if p.startswith('naturalspeech3/audio/zstts/'):
      g = 'sr-ns3-' + parts[3].lower()
      if parts[4] in ('gt', 'prompt'): return 0, 'gt', 'real', g
      s = parts[5]
      return syn({'our': 'naturalspeech3', 'ns2': 'naturalspeech2', 'megatts2': 'megatts', 'voicebox_reproduce': 'voicebox'}.get(s, s), g)
    if p.startswith('naturalspeech3/audio/recon/'):
      if len(parts) < 4: return None
      s = parts[3]
      if s == 'gt': return 0, 'gt', 'real', 'sr-ns3-recon'
      return syn({'our': 'facodec'}.get(s, s.split('_')[0]), 'sr-ns3-recon')
    return None
  if repo.startswith('neonbjb'):
    if p.startswith('tortoise/voices/'): return 0, 'gt', 'real', 'tortoise-' + p.split('/')[2]
    if 'tacotron_comparison' in p: return None  # Tacotron 2 samples of unnamed vocoder
    if 'naturalspeech_comparison' in p: return syn('naturalspeech' if stem == 'naturalspeech' else 'tortoise', 'tortoise-misc')
    v = stem if ('/various/' in p or '/riding_hood/' in p) else 'misc'
    v = TORTOISE_VOICES.get(v, v)
    return syn('tortoise', 'tortoise-' + v)
def decode(data):
  r = subprocess.run([FF, '-v', 'error', '-i', 'pipe:0', '-ac', '1', '-ar', '16000', '-f', 'f32le', 'pipe:1'], input=data, capture_output=True)
  if r.returncode: return None
  return np.frombuffer(r.stdout, np.float32)
# v7 (stop 47): SPEECH_EXTRA=1 appends the sources of extra_sources.py after these, so every earlier clip keeps its index
# (and with it its split, its codec copies and its self-vocoded twins); train.py puts every extra clip in training.
# v8 (stop 48): SPEECH_EXTRA=2 appends extra_sources.py's bona fide v8 repositories after those, the same way.
# v10 (stop 50): SPEECH_EXTRA=3 appends extra_sources.py's v10 systems after the v7 extras instead.
EXTRA = os.environ.get('SPEECH_EXTRA', '') in ('1', '2', '3')
EXTRA_V8, EXTRA_V10 = {}, {}
if EXTRA:
  from extra_sources import EXTRA_FAMILY, EXTRA_SOURCES, label_extra
  assert not EXTRA_FAMILY.keys() & FAMILY.keys(), 'EXTRA_FAMILY holds new system labels only'
  if os.environ['SPEECH_EXTRA'] == '2': from extra_sources import EXTRA_SOURCES_V8 as EXTRA_V8, label_v8
  if os.environ['SPEECH_EXTRA'] == '3': from extra_sources import EXTRA_SOURCES_V10 as EXTRA_V10
  SOURCES = {**SOURCES, **EXTRA_SOURCES, **EXTRA_V8, **EXTRA_V10}; FAMILY = {**FAMILY, **EXTRA_FAMILY}
clips, meta, manifest = [], [], {'sources': []}
for repo, (mdir, ref, prefixes, lic) in SOURCES.items():
  extra = EXTRA and (repo in EXTRA_SOURCES or repo in EXTRA_V8 or repo in EXTRA_V10)
  labelled = partial(label_v8, repo) if repo in EXTRA_V8 else partial(label_extra, repo, family=FAMILY) if extra else partial(label, repo)
  gd = f'{M}/{mdir}/repo'
  if os.path.isdir(f'{gd}/.git'): gd += '/.git'  # some snapshots arrive as a work tree
  commit = subprocess.check_output(['git', '--git-dir', gd, 'rev-parse', ref]).decode().strip()
  ls = subprocess.check_output(['git', '--git-dir', gd, 'ls-tree', '-r', '-l', ref] + prefixes).decode().splitlines()
  counts = {}; missing = 0
  for line in ls:
    info, p = line.split('\t', 1)
    _, typ, sha, size = info.split()
    if not re.search(r'\.(wav|flac|mp3|ogg|opus|m4a|webm)$' if extra else r'\.(wav|flac|mp3)$', p, re.I if extra else 0): continue
    lab = labelled(p)
    if lab is None: continue
    try: data = subprocess.check_output(['git', '--git-dir', gd, 'cat-file', 'blob', sha], stderr=subprocess.DEVNULL)
    except subprocess.CalledProcessError: missing += 1; continue
    if data.startswith(b'version https://git-lfs'): missing += 1; continue
    x = decode(data)
    if x is None or len(x) < 8000: missing += 1; continue
    x = x[:40 * 16000]  # evaluation reads at most 8 windows of 4 s
    clips.append(x); meta.append({'repo': repo, 'path': p, 'label': lab[0], 'system': lab[1], 'family': lab[2], 'group': lab[3], 'seconds': round(len(x) / 16000, 2), **({'extra': True} if extra else {})})
    k = f"{'synthetic' if lab[0] else 'real'}:{lab[1]}"; counts[k] = counts.get(k, 0) + 1
  manifest['sources'].append({'repo': repo, 'commit': commit, 'ref': ref, 'paths': prefixes, 'licence': lic, 'counts': counts, 'missing_or_undecodable': missing})
  print(repo, counts, 'missing', missing, flush=True)
os.makedirs(OUT, exist_ok=True)
lens = np.array([len(c) for c in clips]); offs = np.concatenate([[0], np.cumsum(lens)])
np.savez(f'{OUT}/clips.npz', audio=np.concatenate(clips), offs=offs)
json.dump(meta, open(f'{OUT}/meta.json', 'w'))
manifest['total'] = {'real': sum(1 for m in meta if m['label'] == 0), 'synthetic': sum(1 for m in meta if m['label'] == 1)}
manifest['reserved_not_read'] = ['resemble-ai/Resemblyzer audio_data/donald_trump', 'resemble-ai/Resemblyzer audio_data/librispeech_test-other']
json.dump(manifest, open(os.path.join(os.path.dirname(os.path.abspath(__file__)), 'manifest.json') if OUT == '/work/data/speech' else f'{OUT}/manifest.json', 'w'), indent=1)  # v3 runs write beside the data; diff against training/speech/manifest.json
print(manifest['total'])
