"""Extract real/synthetic speech from public demo repositories (bare git snapshots made by `fetch`),
label each clip with its system from the page's folder/file names, decode to 16 kHz mono float32 and
write /work/data/speech/clips.npz + training/speech/manifest.json.
Resemblyzer: ONLY audio_data/librispeech_train-clean-100 (donald_trump, librispeech_test-other are reserved)."""
import json, os, re, subprocess, sys, numpy as np
M = '/work/.mirror'
FF = '/work/main/node_modules/@ffmpeg-installer/linux-x64/ffmpeg'
OUT = '/work/data/speech'
SOURCES = {
  'MobileSpeech/MobileSpeech.github.io': ('MobileSpeech+MobileSpeech.github.io', ['assets/audios/waves/'], 'CC0-1.0'),
  'styletts2/styletts2.github.io': ('styletts2+styletts2.github.io', ['wavs/'], 'see repo LICENSE (demo page)'),
  'jik876/hifi-gan-demo': ('jik876+hifi-gan-demo', ['samples/'], 'demo page, no licence file (research use)'),
  'coqui-ai/TTS': ('coqui-ai+TTS', ['tests/data/ljspeech/wavs/'], 'MPL-2.0 (LJSpeech clips public domain)'),
  'RUB-SysSec/WaveFake': ('RUB-SysSec+WaveFake', ['tests/sample_data/'], 'see repo (LJSpeech public domain)'),
  'resemble-ai/Resemblyzer': ('resemble-ai+Resemblyzer', ['audio_data/librispeech_train-clean-100/'], 'Apache-2.0 repo; LibriSpeech CC-BY-4.0'),
}
def label(repo, p):
  """returns (label 0 real / 1 synthetic, system, family, speaker/source group) or None to skip"""
  f = os.path.basename(p); d = os.path.dirname(p)
  if repo.startswith('MobileSpeech'):
    m = re.match(r'assets/audios/waves/(\d+)/(\w+)\.wav$', p)
    if not m: return None
    s = m.group(2); g = 'mobilespeech-' + m.group(1)
    if s == 'gtexample': return 0, 'gt', 'real', g
    fam = {'gtcodec': 'codec', 'megatts': 'zeroshot', 'mobilespeech': 'zeroshot', 'valle': 'zeroshot', 'yourtts': 'zeroshot'}[s]
    return 1, s, fam, g
  if repo.startswith('styletts2'):
    parts = d.split('/')[1:]
    last = parts[-1]
    corpus = parts[0]
    if last in ('GT', 'Ref'): return 0, 'gt', 'real', 'styletts-' + corpus
    if corpus == 'Variation' and last == 'LibriTTS': return None  # ambiguous on the page
    sysmap = {'JETS': ('jets', 'e2e'), 'VITS': ('vits', 'e2e'), 'NaturalSpeech': ('naturalspeech', 'e2e'),
              'StyleTTS': ('styletts', 'styletts'), 'StyleTTS2': ('styletts2', 'styletts'), 'VallE': ('valle', 'zeroshot'),
              'YourTTS': ('yourtts', 'zeroshot'), 'NaturalSpeech2': ('naturalspeech2', 'diffusion'), 'FastDiff': ('fastdiff', 'diffusion')}
    if last in sysmap: s, fam = sysmap[last]; return 1, s, fam, 'styletts-' + corpus
    if corpus in ('Ablation', 'Emotion', 'Long', 'abstract'): return 1, 'styletts2', 'styletts', 'styletts-' + corpus
    return None
  if repo.startswith('jik876'):
    parts = d.split('/'); sec, s = parts[1], parts[2]
    if s == 'GT': return 0, 'gt', 'real', 'hifigan-' + sec
    if s.startswith('HGAN') or sec in ('as', 'as3') or s == 'V1_500': return 1, 'hifigan', 'hifigan', 'hifigan-' + sec
    if s.startswith('MG'): return 1, 'melgan', 'melgan', 'hifigan-' + sec
    if s.startswith('WG'): return 1, 'waveglow', 'autoregressive-flow', 'hifigan-' + sec
    if s == 'WN': return 1, 'wavenet', 'autoregressive-flow', 'hifigan-' + sec
    return None
  if repo.startswith('coqui'): return 0, 'gt', 'real', 'ljspeech'
  if repo.startswith('RUB'):
    if '/generated/' in p: return 1, 'wavefake-melgan', 'melgan', 'ljspeech'
    return 0, 'gt', 'real', 'ljspeech'
  if repo.startswith('resemble'):
    assert 'librispeech_train-clean-100' in p
    return 0, 'gt', 'real', 'librispeech-' + f.split('-')[0]
def decode(data):
  r = subprocess.run([FF, '-v', 'error', '-i', 'pipe:0', '-ac', '1', '-ar', '16000', '-f', 'f32le', 'pipe:1'], input=data, capture_output=True)
  if r.returncode: return None
  return np.frombuffer(r.stdout, np.float32)
clips, meta, manifest = [], [], {'sources': []}
for repo, (mdir, prefixes, lic) in SOURCES.items():
  gd = f'{M}/{mdir}/repo'
  commit = subprocess.check_output(['git', '--git-dir', gd, 'rev-parse', 'HEAD']).decode().strip()
  ls = subprocess.check_output(['git', '--git-dir', gd, 'ls-tree', '-r', '-l', 'HEAD'] + prefixes).decode().splitlines()
  counts = {}; missing = 0
  for line in ls:
    info, p = line.split('\t', 1)
    _, typ, sha, size = info.split()
    if not re.search(r'\.(wav|flac)$', p): continue
    lab = label(repo, p)
    if lab is None: continue
    try: data = subprocess.check_output(['git', '--git-dir', gd, 'cat-file', 'blob', sha], stderr=subprocess.DEVNULL)
    except subprocess.CalledProcessError: missing += 1; continue
    if data.startswith(b'version https://git-lfs'): missing += 1; continue
    x = decode(data)
    if x is None or len(x) < 8000: missing += 1; continue
    clips.append(x); meta.append({'repo': repo, 'path': p, 'label': lab[0], 'system': lab[1], 'family': lab[2], 'group': lab[3], 'seconds': round(len(x) / 16000, 2)})
    k = f"{'synthetic' if lab[0] else 'real'}:{lab[1]}"; counts[k] = counts.get(k, 0) + 1
  manifest['sources'].append({'repo': repo, 'commit': commit, 'paths': prefixes, 'licence': lic, 'counts': counts, 'missing_or_undecodable': missing})
  print(repo, counts, 'missing', missing, flush=True)
os.makedirs(OUT, exist_ok=True)
lens = np.array([len(c) for c in clips]); offs = np.concatenate([[0], np.cumsum(lens)])
np.savez(f'{OUT}/clips.npz', audio=np.concatenate(clips), offs=offs)
json.dump(meta, open(f'{OUT}/meta.json', 'w'))
manifest['total'] = {'real': sum(1 for m in meta if m['label'] == 0), 'synthetic': sum(1 for m in meta if m['label'] == 1)}
manifest['reserved_not_read'] = ['resemble-ai/Resemblyzer audio_data/donald_trump', 'resemble-ai/Resemblyzer audio_data/librispeech_test-other']
json.dump(manifest, open(os.path.join(os.path.dirname(__file__), 'manifest.json'), 'w'), indent=1)
print(manifest['total'])
