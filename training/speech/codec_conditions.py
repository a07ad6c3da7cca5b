"""The clips the shipped model's thresholds were chosen on, encoded as people's recordings arrive.

    SPEECH_DATA=/work/data/speech /usr/bin/python3 training/speech/codec_conditions.py /work/data/speech-cond

Needs prepare.py's clips.npz and meta.json (the 15 sources at manifest.json's commits). Writes v1's
held-out split (train.py's v1_test: 83 synthetic clips of WaveGlow, WaveNet, VITS, JETS, NaturalSpeech,
NaturalSpeech 2 and FastDiff, 79 bona fide clips of other speakers) as 16 kHz WAV into orig/, then each
clip encoded by the system ffmpeg (else the one the service ships) as voice notes and podcasts are: Opus (OGG) at 12, 16, 24, 32 and 48 kb/s,
AAC (M4A) and MP3 at 32 and 64 kb/s, mono. One folder per condition, each with labels.csv (1 = synthetic).
server/scripts/fit-speech-codec-thresholds.ts scores them and chooses the low-bitrate thresholds.
With --validation (v6, stop 45) it writes the validation split's clips instead (252 synthetic of seen systems, 109 bona fide
of speakers training never reads): v1's held-out clips are test clips for every later model, so a later model's codec
thresholds are chosen on validation.
With --test (stop 46) it writes the whole 16-system test split (466 synthetic, 165 bona fide) as 16 kHz WAV into orig/
only, to measure the service path once after its thresholds are chosen; no codec condition is encoded unless named.
--conditions a,b writes only those conditions (and orig/). The telephone-band conditions (wav8k, mulaw8k, phone8k)
choose the model's 8 kHz pair (narrowbandThresholds).
"""
import argparse, os, shutil, subprocess, sys, wave
import numpy as np
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import train as T  # noqa: E402  (split and v1_test; train.py trains only under __main__)

cli = argparse.ArgumentParser(description='write speech clips as people\'s recordings arrive, one folder per condition')
cli.add_argument('out', nargs='?', default='/work/data/speech-cond')
split_choice = cli.add_mutually_exclusive_group()
split_choice.add_argument('--validation', action='store_true', help='the validation split (thresholds are chosen here)')
split_choice.add_argument('--test', action='store_true', help='the whole 16-system test split, orig/ only unless --conditions')
cli.add_argument('--conditions', type=lambda text: text.split(','), help='only these conditions (and orig/)')
options = cli.parse_args()
OUT = options.out
# the system ffmpeg encoded every condition so far; without one (a fresh machine), the static build the service ships
FFMPEG = os.environ.get('FFMPEG') or shutil.which('ffmpeg') or os.path.join(
  os.path.dirname(os.path.abspath(__file__)), '..', '..', 'node_modules', '@ffmpeg-installer', 'linux-x64', 'ffmpeg')
CONDITIONS = {  # folder: (extension, ffmpeg encoder arguments)
  'opus12': ('ogg', ['-c:a', 'libopus', '-b:a', '12k']),
  'opus16': ('ogg', ['-c:a', 'libopus', '-b:a', '16k']),
  'opus24': ('ogg', ['-c:a', 'libopus', '-b:a', '24k']),
  'opus32': ('ogg', ['-c:a', 'libopus', '-b:a', '32k']),
  'opus48': ('ogg', ['-c:a', 'libopus', '-b:a', '48k']),
  'aac32': ('m4a', ['-c:a', 'aac', '-b:a', '32k']),
  'aac64': ('m4a', ['-c:a', 'aac', '-b:a', '64k']),
  'mp3_32': ('mp3', ['-c:a', 'libmp3lame', '-b:a', '32k']),
  'mp3_64': ('mp3', ['-c:a', 'libmp3lame', '-b:a', '64k']),
  # Telephone band (stop 46): 8 kHz PCM, G.711 µ-law, and µ-law after the 300-3400 Hz band of a phone line.
  'wav8k': ('wav', ['-ar', '8000', '-c:a', 'pcm_s16le']),
  'mulaw8k': ('wav', ['-ar', '8000', '-c:a', 'pcm_mulaw']),
  'phone8k': ('wav', ['-af', 'highpass=f=300,lowpass=f=3400', '-ar', '8000', '-c:a', 'pcm_mulaw']),
}

meta = T.json.load(open(f'{T.D}/meta.json'))
_, validation, test = T.split(meta)
keep = validation if options.validation else test if options.test else T.v1_test(meta, test)
if options.conditions is not None: CONDITIONS = {k: CONDITIONS[k] for k in options.conditions}
elif options.test: CONDITIONS = {}
z = np.load(f'{T.D}/clips.npz'); audio, offsets = z['audio'], z['offs']
for folder in ['orig', *CONDITIONS]: os.makedirs(os.path.join(OUT, folder), exist_ok=True)
rows = {folder: ['file,label'] for folder in ['orig', *CONDITIONS]}
for i in keep:
  stem = f'c{i:04d}'
  wav = os.path.join(OUT, 'orig', stem + '.wav')
  with wave.open(wav, 'wb') as w:
    w.setnchannels(1); w.setsampwidth(2); w.setframerate(T.SR)
    w.writeframes((np.clip(audio[offsets[i]:offsets[i + 1]], -1, 1) * 32767).astype('<i2').tobytes())
  rows['orig'].append(f'{stem}.wav,{meta[i]["label"]}')
  for folder, (ext, args) in CONDITIONS.items():
    subprocess.run([FFMPEG, '-v', 'error', '-y', '-i', wav, *args, os.path.join(OUT, folder, f'{stem}.{ext}')], check=True)
    rows[folder].append(f'{stem}.{ext},{meta[i]["label"]}')
for folder, lines in rows.items():
  open(os.path.join(OUT, folder, 'labels.csv'), 'w').write('\n'.join(lines) + '\n')
print(len(keep), 'clips,', sum(meta[i]['label'] for i in keep), 'synthetic, in', len(rows), 'conditions under', OUT)
