"""Extra training sources for the speech detector, in the format of prepare.py's SOURCES / FAMILY / label.
Only audio files are read from these snapshots. Held-out systems (WaveGlow, WaveNet, VITS, JETS, NaturalSpeech 1-3,
FastDiff, WaveRNN, DiffWave, WaveGrad 1/2, PriorGrad, SpecGrad, diffusion vocoders) and bona fide clips of VCTK, LibriTTS,
TED, RAVDESS, JSUT, JVS, CSMSC and CMU ARCTIC return None. Repositories, counts and licences: MODEL_CARD.md, "v7 attempt"."""
import json, os, re

EXTRA_SOURCES = {  # repo: (mirror dir, git ref, path prefixes, licence)
  'Jakobovski/free-spoken-digit-dataset': ('Jakobovski+free-spoken-digit-dataset', 'HEAD', ['recordings/'], 'CC-BY-SA-4.0 (README)'),
  'shivammehta25/Matcha-TTS': ('shivammehta25+Matcha-TTS', 'docs', ['stimuli/'], 'MIT (repo LICENSE); docs branch is the demo page'),
  'shivammehta25/OverFlow': ('shivammehta25+OverFlow', 'main', ['docs/audio/OF/', 'docs/audio/OFND/', 'docs/audio/OFZT/'], 'MIT (repo LICENSE)'),
  'shivammehta25/Neural-HMM': ('shivammehta25+Neural-HMM', 'main', ['docs/audio/NeuralHMM/2State/HiFiGAN/', 'docs/audio/Tacotron/TacotronWOPostnet/HiFiGAN/', 'docs/audio/Tacotron/TacotronWPostnet/HiFiGAN/'], 'MIT (repo LICENSE)'),
  'gemelo-ai/vocos': ('gemelo-ai+vocos', 'gh-pages', ['audio/'], 'MIT (repo LICENSE on main; gh-pages is the demo page)'),
  'maum-ai/univnet': ('maum-ai+univnet', 'HEAD', ['docs/samples/'], 'BSD-3-Clause (repo LICENSE)'),
  'melgan-neurips/melgan-neurips.github.io': ('melgan-neurips+melgan-neurips.github.io', 'HEAD', ['assets/ablation/', 'assets/inversion/'], 'MIT (page repo LICENSE)'),
  'NVIDIA/OpenSeq2Seq': ('NVIDIA+OpenSeq2Seq', 'HEAD', ['docs/samples/'], 'Apache-2.0'),
  'starganv2-vc/starganv2-vc.github.io': ('starganv2-vc+starganv2-vc.github.io', 'HEAD', ['wav/'], 'no licence file (demo page)'),
  'haoheliu/demopage-voicefixer': ('haoheliu+demopage-voicefixer', 'HEAD', ['resources/audio/real/Unprocessed/', 'resources/audio/real/VF_UNet/', 'resources/audio/simulated/'], 'no licence file (demo page)'),
  'SWivid/SWivid.github.io': ('SWivid+SWivid.github.io', 'HEAD', ['F5-TTS/audios/'], 'no licence file (demo page)'),
  'maskgct/maskgct.github.io': ('maskgct+maskgct.github.io', 'HEAD', ['audios/'], 'no licence file (demo page)'),
  'grad-tts/grad-tts.github.io': ('grad-tts+grad-tts.github.io', 'HEAD', ['assets/'], 'no licence file (demo page)'),
  'siddiquelatif/URDU-Dataset': ('siddiquelatif+URDU-Dataset', 'HEAD', ['Angry/', 'Happy/', 'Neutral/', 'Sad/'], 'no licence file; README: research use only (utterances cut from YouTube talk shows)'),
  '0nutation/SpeechTokenizer.github.io': ('0nutation+SpeechTokenizer.github.io', 'HEAD', ['reconstruction/', 'zs_tts/', 'oneshot_vc/', 'unseen/'], 'no licence file (demo page)'),
}

EXTRA_FAMILY = {  # the labels new here; prepare.py adds them to its FAMILY, which the labels reused here come from
  'matcha': 'two-stage', 'overflow': 'two-stage', 'neuralhmm': 'two-stage',
  'vocos': 'gan', 'istftnet': 'gan', 'bark': 'zeroshot', 'bark-vocos': 'zeroshot',
  'tacotron2-gl': 'griffinlim', 'centaur-gl': 'griffinlim',
  'starganv2-vc': 'vc', 'voicefixer': 'restoration',
  'f5tts': 'flow', 'maskgct': 'zeroshot', 'uslm': 'zeroshot', 'speechtokenizer': 'codec',
  # v10 (stop 50)
  's3prl-vc': 'vc', 'lvc-vc': 'vc', 'nvc-net': 'vc', 'voicecraft': 'zeroshot', 'xtts': 'zeroshot', 'seedtts': 'zeroshot',
  'fastspeech2-hifigan': 'two-stage', 'fastspeech2-bigvgan': 'two-stage', 'seamlessm4t': 'unit',
}


def _real(g): return 0, 'gt', 'real', g


def label_extra(repo, p, family):
  """returns (label 0 real / 1 synthetic, system, family, group) or None to skip; family: system label -> family"""
  _syn = lambda s, g: (1, s, family[s], g)
  f = os.path.basename(p); d = os.path.dirname(p); stem = os.path.splitext(f)[0]
  parts = d.split('/')
  if repo == 'Jakobovski/free-spoken-digit-dataset':  # <digit>_<speaker>_<n>.wav, home recordings of 6 speakers
    # stop 47: only takes 0-9 of each digit and speaker (of 50): by repository weight this one 8 kHz corpus would
    # otherwise outweigh every other bona fide source together
    m = re.match(r'\d_([a-z]+)_(\d+)$', stem)
    return _real('x-fsdd-' + m.group(1)) if m and int(m.group(2)) < 10 else None
  if repo == 'siddiquelatif/URDU-Dataset':  # S<gender><id>_F<n>_<emotion><n>.wav, Urdu talk-show speech, 38 speakers
    m = re.match(r'(S[MF]\d+)_F\d+_[AHNS]\d+$', stem)
    return _real('x-urdu-' + m.group(1).lower()) if m else None
  if repo == 'shivammehta25/Matcha-TTS':
    # only the MAT (Matcha-TTS) conditions: the repo's synthesis code ships HiFi-GAN as its only vocoder; the page does
    # not name the vocoder of VOC / GRAD / GCFM / FS2, and VITS is held out
    return _syn('matcha', 'matcha-lj') if stem.startswith('MAT-') else None
  if repo == 'shivammehta25/OverFlow':
    # OF / OFND / OFZT are OverFlow itself; README: synthesis with a HiFi-GAN checkpoint. Baseline folders are not read.
    sub = parts[3]
    g = {'ListeningTest': 'overflow-lj', 'SamplingTemperature': 'overflow-lj', 'RyanVariations': 'overflow-ryan',
         'DifferentSpeakers': 'overflow-ft', 'Summary': 'overflow-summary'}.get(sub)
    return _syn('overflow', g) if g else None
  if repo == 'shivammehta25/Neural-HMM':  # page section 'Effect of using HiFi-GAN and a post-net' (HiFi-GAN LJ_FT_T2_V1)
    if stem.startswith('NeuralHMM'): return _syn('neuralhmm', 'nhmm-lj')
    if stem.startswith('Tacotron'): return _syn('tacotron2-hifigan', 'nhmm-lj')
    return None
  if repo == 'gemelo-ai/vocos':
    if parts[1] == 'bark':  # Bark tokens decoded by EnCodec (encodec*.mp3) or Vocos (vocos*.mp3)
      return _syn('bark-vocos' if stem.startswith('vocos') else 'bark', 'vocos-bark')
    if parts[1] == 'mel':  # resynthesis from mel of LibriTTS utterances; gt is LibriTTS, not used
      s = parts[2]
      return None if s == 'gt' else _syn({'bigvgan': 'bigvgan', 'hifigan': 'hifigan', 'istftnet': 'istftnet', 'vocos': 'vocos'}[s], 'vocos-libritts')
    if parts[1] == 'encodec':  # DAPS clean recordings (f10_script1_cleanraw...) and their EnCodec / Vocos resynthesis
      if parts[2] == 'gt': return _real('x-daps')
      return _syn({'encodec': 'encodec', 'vocos': 'vocos'}[parts[3]], 'vocos-daps')
    return None
  if repo == 'maum-ai/univnet':  # ground_truth is LibriTTS (not used); c16/c32 this repo's UnivNet, official_* the authors'
    if parts[3] == 'ground_truth': return None
    return _syn('univnet', 'univnet-libritts')
  if repo == 'melgan-neurips/melgan-neurips.github.io':  # 'original' folders are real speech of an unnamed corpus: not used
    if parts[-1] == 'original': return None
    return _syn('melgan', 'melgan-' + parts[1])
  if repo == 'NVIDIA/OpenSeq2Seq':  # docs: Tacotron 2 and Centaur, both Griffin-Lim; LJ = LJSpeech, US/UK = M-AILABS voices
    if parts[-1] == 'centaur': return _syn('centaur-gl', 'os2s-lj')
    m = re.match(r'(LJ|US|UK)_\d+$', stem)
    return _syn('tacotron2-gl', 'os2s-' + m.group(1).lower()) if m else None
  if repo == 'starganv2-vc/starganv2-vc.github.io':
    # StarGANv2-VC outputs (vocoder: Parallel WaveGAN, named in the page abstract); autovc.wav is AUTO-VC with a WaveNet
    # vocoder (held out); real speech only from ESD (folder EMD); VCTK/JVS real and singing are not used
    if 'Singing' in parts or f == 'autovc.wav': return None
    corpus = parts[1]
    if f in ('starganv2.wav', 'converted.wav', 'full.wav') or (corpus == 'VCTK' and parts[2] == 'Crosslingual' and re.match(r'p\d+$', stem)) \
       or (parts[1] == 'Ablation' and stem.startswith('no_')):
      return _syn('starganv2-vc', 'stargan-' + corpus.lower())
    if corpus == 'EMD' and (stem == 'source' or stem == 'reference'): return _real('x-esd')
    return None
  if repo == 'haoheliu/demopage-voicefixer':
    # real/Unprocessed: degraded real-world recordings chosen by the authors; VF_UNet: VoiceFixer (analysis + neural vocoder)
    if parts[-1] == 'Unprocessed' and parts[2] == 'real': return _real('x-voicefixer-real')
    if parts[-1] == 'VF_UNet': return _syn('voicefixer', 'voicefixer-' + parts[2])
    return None
  if repo == 'SWivid/SWivid.github.io':
    # page: 'All samples ... generated with F5-TTS ... with pretrained Vocos as vocoder'. *_e2tts are E2 TTS (vocoder not
    # named); prompts (*_ref, speed_control_N, e2tts_speed_N, seedtts_ref_*) are taken from other pages (RAVDESS etc.): skip
    sec = parts[2]
    if sec == 'emotion': return None  # stop 47: voiced from RAVDESS prompts, whose speakers are validation bona fide
    if sec == 'robustness': return _syn('f5tts', 'f5-robust') if stem.endswith('_gen') else None
    if sec == 'speed_control': return _syn('f5tts', 'f5-speed') if re.search(r'_\d\.\dx$', stem) else None
    if sec == 'zero_shot': return _syn('f5tts', 'f5-zeroshot') if '_gen_' in stem else None
    return None
  if repo == 'maskgct/maskgct.github.io':  # column layout read from index.html
    sec = parts[1]
    if sec == 'icl_smaples': return _syn('maskgct', 'maskgct-icl') if re.match(r'icl_[1-8][12]$', stem) else None  # X0 = prompt; row 0 is out of order
    if sec == 'celeb_samples': return _syn('maskgct', 'maskgct-celeb') if stem.endswith('_1') else None  # _0 = prompt
    if sec == 'emotion_samples':
      if len(parts) == 2: return _syn('maskgct', 'maskgct-emotion')
      return None if stem == 'prompt' else _syn('maskgct', 'maskgct-emotion')
    if sec == 'style_samples':
      if parts[2] == 'gen': return _syn('maskgct', 'maskgct-style')
      if re.match(r'00(1\d|20)_\d+$', stem): return _real('x-esd')  # ESD English speakers 0011-0020
      if re.match(r'[A-Z]{3}_[ab]\d{4}$', stem): return None  # stop 47: L2-ARCTIC reads CMU ARCTIC's prompts (validation bona fide)
      return None
    if sec == 'tempo_samples': return _syn('maskgct', 'maskgct-tempo') if re.match(r'tempo_\d[1-4]$', stem) else None
    if sec == 'robustness_samples': return _syn('maskgct', 'maskgct-robust') if parts[2] == 'maskgct' else None  # 'ar' = unnamed AR baseline
    if sec == 'vc_samples': return _syn('maskgct', 'maskgct-vc') if stem.endswith('2') else None  # 0 source, 1 prompt, 2 generated
    return None  # edit_samples: VCTK source and partly edited speech
  if repo == 'grad-tts/grad-tts.github.io':  # page note: 'HiFi-GAN is used as vocoder'
    sec = parts[1] if len(parts) > 1 else ''
    if sec == 'mos':
      m = re.match(r'\d+_(.+)$', stem)
      if not m: return None  # bare NN.wav = 'Ground truth', not said whether recorded or vocoded
      s = m.group(1)
      return _syn('gradtts' if s.startswith('grad-tts') else {'fastspeech': 'fastspeech', 'glow-tts': 'glowtts-hifigan', 'taco2': 'tacotron2-hifigan'}[s], 'gradtts-lj')
    if sec in ('generalized_vs_standard', 'temperature', 'tempo') or f == 'abstract.wav': return _syn('gradtts', 'gradtts-lj')
    return None  # e2e: waveform-domain diffusion (held out); test: intermediate refinement steps
  if repo == '0nutation/SpeechTokenizer.github.io':
    sec = parts[0]
    if sec == 'reconstruction':  # rows e = EnCodec, s = SpeechTokenizer; RVQ-1:8 is the full reconstruction; raw not used
      return _syn({'e': 'encodec', 's': 'speechtokenizer'}[parts[1]], 'st-recon') if stem == 'rvq_8' else None
    if sec == 'unseen': return _syn('speechtokenizer', 'st-unseen') if stem in ('RVQ_8', 'RVQ8') else None
    if sec == 'zs_tts':  # columns Vall-E (encodec.wav), USLM (speechtokenizer.wav), USLM(soundstorm); prompt/groundtruth not used
      return {'encodec': _syn('valle', 'st-zstts'), 'speechtokenizer': _syn('uslm', 'st-zstts'), 'soundstorm': _syn('uslm', 'st-zstts')}.get(stem)
    if sec == 'oneshot_vc': return _syn('uslm', 'st-vc') if stem == 'generated' else None
    return None
  # v10 (stop 50) sources: EXTRA_SOURCES_V10, below
  if repo == 'unilight/Publication-Demos':
    # S3PRL-VC (Huang et al., ICASSP 2022): any-to-one conversion of VCC2020 by 16 self-supervised front ends, a Tacotron-style
    # decoder and Parallel WaveGAN (the vocoder is named in the recipe README the page links to). Sources and targets are
    # VCC2020 recordings: English sources, English, Finnish, German and Mandarin targets.
    if parts[3] in ('source', 'target'): return _real('x-vcc2020-' + parts[4].lower())
    m = re.match(r'a2o-taco2-ar_\w+?_(T[EFGM][FM][12])_S[EF][FM][12]_E\d+$', stem)
    return _syn('s3prl-vc', 's3prlvc-' + m.group(1).lower()) if parts[3] == 'vc' and m else None
  if repo == 'lvc-vc/lvc-vc-demo':  # LVC-VC and NVC-Net synthesise the waveform themselves; Blow (a Glow on the waveform) is left out
    s = {'lvc_vc': 'lvc-vc', 'lvc_vc_xl': 'lvc-vc', 'nvcnet': 'nvc-net'}.get(parts[1])
    return _syn(s, 'lvcvc-' + parts[2]) if s and len(parts) == 3 else None
  if repo == 'jasonppy/VoiceCraft_web':  # columns "VoiceCraft (Ours)", "VALLE", "XTTS v2"; GigaSpeech and RealEdit recordings
    if re.match(r'\d+_\d+_\d+_\d+', stem): return None  # LibriTTS utterances and everything voiced from them
    sec = parts[2]
    if sec == 'tts':
      if stem.startswith('YOU') and stem.endswith(('_orig', '_prompt')): return _real('x-gigaspeech-' + stem.split('_')[0].lower())
      m = re.search(r'_(ve|valle|xtts)$', stem)
      return _syn({'ve': 'voicecraft', 'valle': 'valle', 'xtts': 'xtts'}[m.group(1)], 'voicecraft-tts') if m else None
    if sec == 'speech_editing':
      if stem.endswith('_ve'): return _syn('voicecraft', 'voicecraft-edit')  # the whole utterance is decoded again
      return _real('x-realedit') if stem.startswith(('YOU', 'show_')) and not stem.endswith('_fs') else None
    if sec == 'VoiceCraft_Voicebox': return _syn('voicecraft', 'voicecraft-vb') if parts[3] == 'voicecraft' else None
    return None
  if repo == 'BytedanceSpeech/bytedancespeech.github.io':  # Seed-TTS tech report; prompts and sources are in-house recordings
    sec = parts[2]
    if 'prompt' in parts or 'source' in parts: return _real('x-seedtts-prompt')
    if sec == 'RL_ICL_samples': return _real('x-seedtts-prompt') if stem in SEEDTTS_RL_PROMPTS else _syn('seedtts', 'seedtts-rl')
    if sec in ('ZeroShotICL_samples', 'SpeakerFinetune_samples', 'Emotion_samples', 'Novel_samples', 'SpeechFactorization_samples'):
      return _syn('seedtts', 'seedtts-' + sec.split('_')[0].lower())
    return None  # DIT*: the fully diffusion-based variant, waveform decoder not named
  if repo == 'davidguzmanr/davidguzmanr.github.io':  # page _portfolio/2023-tts-experiments.md: Spanish, French, English, Mohawk
    sec = parts[2]
    if sec == 'ground-truth': return _real('x-everyvoice-spa')
    if sec == 'HiFiGAN' or (sec == 'ensemble' and parts[3] in ('hifigan', 'hifigan-finetuned')): return _syn('fastspeech2-hifigan', 'everyvoice')
    if sec == 'BigVGAN': return _syn('fastspeech2-bigvgan', 'everyvoice')
    if sec == 'SeamlessM4T' and parts[-1] != 'ground-truth':  # SeamlessM4T's unit HiFi-GAN (its paper)
      return _syn('seamlessm4t', 'seamless-' + (parts[-1] if parts[-1] in ('eng', 'spa', 'fra') else 'moh'))
    return None
  return None


# v8 (stop 48): bona fide only, in languages, microphones and rooms training had not heard. prepare.py SPEECH_EXTRA=2 appends
# them after the v7 extras. The clips are listed in bona-v8.json (path, speaker group): a helper picked them by the rules in
# MODEL_CARD.md "Data (v8)" (1.5-20 s, at most 150 per repository, per-speaker caps), and msc's speakers come from its
# speech.tsv, not from the path. The CSLU Numbers sample it also found was left out: its readme allows use only under
# CSLU's signed licence.
EXTRA_SOURCES_V8 = {
  'CateGitau/Swahili-Speech': ('CateGitau+Swahili-Speech', 'HEAD', ['data/records/'], 'MIT (LICENSE file); read VOA news, one speaker, Lig-Aikuma phone app'),
  'rcebrian/speech-emotion-recognition': ('rcebrian+speech-emotion-recognition', 'HEAD', ['data/', 'tests/'], 'no licence file; Spanish acted emotions recorded by the participants'),
  'smc/msc': ('smc+msc', 'HEAD', ['audio/', 'story/'], 'CC-BY-SA-4.0 (LICENSE file); Malayalam Speech Corpus, volunteers in the browser (Opus WebM) and one story reader'),
  'SJTU-YONGFU-RESEARCH-GRP/Parkinson-Patient-Speech-Dataset': ('SJTU-YONGFU-RESEARCH-GRP+Parkinson-Patient-Speech-Dataset', 'HEAD', ['original-speech-dataset/'], 'no licence for the data; spontaneous speech cut from YouTube videos, original (not denoised) copies'),
}
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), 'bona-v8.json')) as _listed:
  BONA_V8 = {repo: dict(rows) for repo, rows in json.load(_listed).items()}


def label_v8(repo, p):
  group = BONA_V8[repo].get(p)
  return _real(group) if group else None


# v10 (stop 50): more synthetic systems, and the bona fide recordings published beside them, from demo pages a helper
# surveyed (MODEL_CARD.md "Data (v10)"); label_extra holds their rules. prepare.py SPEECH_EXTRA=3 appends them after the v7
# extras (v8's bona fide repositories are not read). Left out of these pages: every held-out system and anything built on one (WaveNet, VITS-line
# models such as YourTTS and HierSpeech++, Blow, a Glow-style flow on the waveform), columns whose waveform generator the
# page and its code do not name (Seed-TTS DiT, FluentSpeech, Voicebox, the VCC2020 challenge entries), bona fide of the
# excluded corpora (VCTK, LibriTTS, ...), and synthetic clips voiced from LibriTTS prompts: the main split drops seen-system
# clips rendered from test sources, and LibriTTS speakers are test bona fide.
EXTRA_SOURCES_V10 = {
  'unilight/Publication-Demos': ('unilight+Publication-Demos', 'master', ['publications/s3prl-vc/samples/'], 'no licence file (demo page); VCC2020 recordings'),
  'lvc-vc/lvc-vc-demo': ('lvc-vc+lvc-vc-demo', 'gh-pages', ['audio/'], 'no licence file (demo page)'),
  'jasonppy/VoiceCraft_web': ('jasonppy+VoiceCraft_web', 'main', ['static/audio_sample/'], 'no licence file (demo page)'),
  'BytedanceSpeech/bytedancespeech.github.io': ('BytedanceSpeech+bytedancespeech.github.io', 'main', ['seedtts_tech_report/audios/'], 'no licence file (demo page)'),
  'davidguzmanr/davidguzmanr.github.io': ('davidguzmanr+davidguzmanr.github.io', 'Academic-Pages-template', ['files/audios/'], "no licence for the audio (the repository's MIT LICENSE is the page template's)"),
}
SEEDTTS_RL_PROMPTS = {'-460085021306370771', '8290562072664275415', '7179544590255160574', '4429815384255822880'}  # first cell of each row
