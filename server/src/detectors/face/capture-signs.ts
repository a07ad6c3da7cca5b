/**
 * Signs of how an identity-verification video was captured: injected by a virtual camera,
 * re-encoded by software, or recorded by a device camera. Camera injection and replay are
 * the attacks ISO/IEC 30107-3 presentation-attack detection does not see (the camera is
 * bypassed, not fooled); ENISA, "Remote Identity Proofing: Attacks & Countermeasures" (2022),
 * §3.3 lists the traces checked here: the software that wrote the stream, its encoder, and
 * frame timing that no physical sensor produces.
 *
 * - Writers: the container's and streams' metadata (ffmpeg's stream report) naming a virtual
 *   camera, streaming or face-filter tool (decisive enough to weigh), an editor or transcoder
 *   (re-encoded: reported), or a phone's camera (reported).
 * - Software encoders: x264 writes its version string into the bitstream (an SEI message);
 *   phone and webcam hardware encoders do not.
 * - Frame timing: phone cameras vary frame duration with exposure; a long run of identical
 *   frame intervals is what renderers and constant-rate transcoders write (reported, weak).
 */
import { open } from 'node:fs/promises';
import { runFfmpeg, videoPackets } from '../media/ffmpeg.js';

/** Virtual cameras, streaming mixers and live face filters: the tools of camera injection. */
const INJECTION_TOOLS: Array<[RegExp, string]> = [
  [/\bOBS\b|obs-studio|OBS Virtual/i, 'OBS Studio'],
  [/ManyCam/i, 'ManyCam'],
  [/XSplit/i, 'XSplit'],
  [/vMix/i, 'vMix'],
  [/Snap ?Camera/i, 'Snap Camera'],
  [/CamTwist/i, 'CamTwist'],
  [/SplitCam/i, 'SplitCam'],
  [/e2eSoft|VCam/i, 'e2eSoft VCam'],
  [/DroidCam/i, 'DroidCam'],
  [/Iriun/i, 'Iriun Webcam'],
  [/NVIDIA Broadcast/i, 'NVIDIA Broadcast'],
  [/mmhmm/i, 'mmhmm'],
  [/Wirecast/i, 'Wirecast'],
  [/DeepFaceLive|Avatarify|FaceRig|Deep-Live-Cam|FaceFusion/i, 'a live face-swap tool'],
  [/virtual ?cam(era)?/i, 'a virtual camera'],
];

/** Editors and transcoders: the file was processed after capture. */
const EDITING_TOOLS: Array<[RegExp, string]> = [
  [/\bLavf|\bLavc|FFmpeg/i, 'FFmpeg (libavformat)'],
  [/HandBrake/i, 'HandBrake'],
  [/Premiere|Adobe/i, 'Adobe'],
  [/DaVinci|Resolve/i, 'DaVinci Resolve'],
  [/CapCut/i, 'CapCut'],
  [/iMovie|Final Cut/i, 'Apple editor'],
];

/** Metadata keys that phones' camera apps write. */
const CAMERA_KEYS = /com\.apple\.quicktime\.(make|model)|com\.android\.(version|capture)|samsung|Core Media Video|VideoHandle\b/i;

export interface CaptureSigns {
  /** Tools of camera injection named in the file's metadata. */
  injectionTools: string[];
  /** Editing or transcoding software named in the metadata or bitstream. */
  editingTools: string[];
  /** Metadata a phone's camera app writes. */
  cameraMetadata: string[];
  /** The x264 software encoder's banner in the bitstream, when present. */
  softwareEncoder: string | null;
  frameTiming: { frames: number; meanIntervalMs: number; intervalCv: number; constant: boolean } | null;
}

/** The metadata lines of the input section of ffmpeg's report (the output section repeats them). */
export function inputMetadata(report: string): string[] {
  const input = report.split(/\n(?:Stream mapping:|Output #0)/)[0] ?? '';
  return input
    .split('\n')
    .map((line) => /^\s+([\w.:-]+)\s*:\s(.*)$/.exec(line))
    .filter((m): m is RegExpExecArray => m !== null && !/^(Duration|Stream|Input)/.test(m[1]!))
    .map((m) => `${m[1]}: ${m[2]!.trim()}`);
}

const named = (lines: string[], tools: Array<[RegExp, string]>) => [...new Set(lines.flatMap((line) => tools.filter(([pattern]) => pattern.test(line)).map(([, name]) => name)))];

/** Intervals between presentation times of the first video stream's packets (no decoding). */
export async function frameTiming(path: string, signal: AbortSignal): Promise<CaptureSigns['frameTiming']> {
  const listing = await videoPackets(path, 60, signal);
  if (!listing) return null;
  const seconds = listing.timeBase;
  const pts = listing.packets.map((packet) => packet.pts).sort((a, b) => a - b);
  if (pts.length < 3) return null;
  const intervals = pts.slice(1).map((p, i) => (p - pts[i]!) * seconds).filter((d) => d > 0);
  if (intervals.length < 2) return null;
  const mean = intervals.reduce((a, b) => a + b, 0) / intervals.length;
  const sd = Math.sqrt(intervals.reduce((a, d) => a + (d - mean) ** 2, 0) / intervals.length);
  return {
    frames: pts.length,
    meanIntervalMs: Math.round(mean * 1e5) / 100,
    intervalCv: Math.round((sd / mean) * 1e4) / 1e4,
    // A second or more of frames, every interval the same to a tenth of a percent.
    constant: intervals.length >= Math.max(30, 1 / mean) && sd / mean < 0.001,
  };
}

/** The x264 banner ("x264 - core N …") within the first 4 MiB of the file. */
async function x264Banner(path: string): Promise<string | null> {
  const file = await open(path, 'r');
  try {
    const buffer = Buffer.alloc(4 * 1024 * 1024);
    const { bytesRead } = await file.read(buffer, 0, buffer.length, 0);
    const text = buffer.subarray(0, bytesRead).toString('latin1');
    const match = /x264 - core \d+/.exec(text);
    return match ? match[0] : null;
  } finally {
    await file.close();
  }
}

export async function readCaptureSigns(path: string, signal: AbortSignal): Promise<CaptureSigns> {
  const { stderr } = await runFfmpeg(['-i', path, '-t', '0', '-f', 'null', '-'], { signal });
  const metadata = inputMetadata(stderr);
  const softwareEncoder = await x264Banner(path);
  const editingTools = named(metadata, EDITING_TOOLS);
  if (softwareEncoder) editingTools.push(`x264 software encoder (${softwareEncoder})`);
  return {
    injectionTools: named(metadata, INJECTION_TOOLS),
    editingTools,
    cameraMetadata: metadata.filter((line) => CAMERA_KEYS.test(line)),
    softwareEncoder,
    frameTiming: await frameTiming(path, signal),
  };
}
