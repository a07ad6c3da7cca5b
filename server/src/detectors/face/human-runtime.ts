/**
 * One @vladmandic/human instance per worker thread, on the tfjs wasm backend, with every
 * model read from the package's own `models/` folder. Nothing is fetched from the network:
 * Human asks tfjs for `file://…` model URLs and a load router registered here answers them
 * from disk (Node 20's fetch has no `file://`).
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL, fileURLToPath } from 'node:url';
import * as tf from '@tensorflow/tfjs-core';
import type { Human, Config, FaceResult } from '@vladmandic/human';
import { fuseRelu6Chains } from './graph-fusion.js';

const require = createRequire(import.meta.url);

/** Folder holding the models shipped in @vladmandic/human. */
export function humanModelsDir(): string {
  // The package's `exports` map blocks subpath imports; its main entry sits in dist/.
  return join(dirname(require.resolve('@vladmandic/human')), '..', 'models');
}

function wasmDir(): string {
  return dirname(require.resolve('@tensorflow/tfjs-backend-wasm/dist/tfjs-backend-wasm.wasm'));
}

/** Serves `file://…/model.json` and its weight shards from disk to tfjs. */
function fileLoadHandler(url: string): tf.io.IOHandler {
  return {
    async load() {
      const jsonPath = fileURLToPath(url);
      const modelJson = JSON.parse(await readFile(jsonPath, 'utf8')) as tf.io.ModelJSON;
      const artifacts = await tf.io.getModelArtifactsForJSON(modelJson, async (manifest) => {
        const specs: tf.io.WeightsManifestEntry[] = [];
        const buffers: Buffer[] = [];
        for (const group of manifest) {
          specs.push(...group.weights);
          for (const shard of group.paths) buffers.push(await readFile(join(dirname(jsonPath), shard)));
        }
        const joined = Buffer.concat(buffers);
        return [specs, joined.buffer.slice(joined.byteOffset, joined.byteOffset + joined.byteLength)];
      });
      return (await fuseRelu6Chains(artifacts)).artifacts;
    },
  };
}

let routerRegistered = false;
function registerFileRouter() {
  if (routerRegistered) return;
  // tfjs routers return null for URLs they do not serve (its typing omits the null).
  const router = (url: string | string[]) => {
    const text = Array.isArray(url) ? url[0] : url;
    return typeof text === 'string' && text.startsWith('file://') ? fileLoadHandler(text) : null;
  };
  tf.io.registerLoadRouter(router as Parameters<typeof tf.io.registerLoadRouter>[0]);
  routerRegistered = true;
}

/**
 * Human configured for still images: no result caching between calls (every call is a
 * different image), rotation correction on, every face module the detectors may need.
 */
function humanConfig(maxFaces: number): Partial<Config> {
  return {
    backend: 'wasm',
    wasmPath: `${wasmDir()}/`,
    modelBasePath: `${pathToFileURL(humanModelsDir()).href}/`,
    cacheModels: false,
    cacheSensitivity: 0,
    skipAllowed: false,
    warmup: 'none',
    debug: false,
    async: false,
    filter: { enabled: false },
    gesture: { enabled: false },
    body: { enabled: false },
    hand: { enabled: false },
    object: { enabled: false },
    segmentation: { enabled: false },
    face: {
      enabled: true,
      detector: { rotation: true, maxDetected: maxFaces, minConfidence: 0.5, minSize: 24, iouThreshold: 0.3, return: false },
      mesh: { enabled: true },
      iris: { enabled: false },
      attention: { enabled: false },
      description: { enabled: true, minConfidence: 0.1 },
      emotion: { enabled: true, minConfidence: 0.1 },
      antispoof: { enabled: true },
      liveness: { enabled: true },
    },
  };
}

export const MAX_FACES = 20;

interface HumanModule {
  Human: new (config?: Partial<Config>) => Human;
}

let instance: Promise<Human> | undefined;

/** Loads Human and its models once per thread; later calls share the same instance. */
export function loadHuman(): Promise<Human> {
  instance ??= (async () => {
    registerFileRouter();
    // The node-wasm build expects tfjs-core, -converter and -backend-wasm as peers.
    const humanPath = join(dirname(require.resolve('@vladmandic/human')), 'human.node-wasm.js');
    const { Human: HumanClass } = require(humanPath) as HumanModule;
    const human = new HumanClass(humanConfig(MAX_FACES));
    await human.init();
    if (tf.getBackend() !== 'wasm') throw new Error(`face models: expected the wasm backend, got ${tf.getBackend()}`);
    await human.load();
    const missing = ['blazeface', 'facemesh', 'faceres', 'emotion', 'antispoof', 'liveness'].filter(
      (name) => !human.models.loaded().includes(name),
    );
    if (missing.length) throw new Error(`face models failed to load: ${missing.join(', ')}`);
    return human;
  })();
  instance.catch(() => {
    instance = undefined; // let a later load() retry instead of caching the failure
  });
  return instance;
}

export interface RgbImage {
  data: Uint8Array;
  width: number;
  height: number;
}

/** Optional face modules; detection, mesh and the faceres embedding always run. */
export interface FaceModules {
  emotion: boolean;
  /** The antispoof and liveness models. */
  spoof: boolean;
}

export const ALL_MODULES: FaceModules = { emotion: true, spoof: true };

/** The parts of tfjs-backend-wasm's BackendWasm used to fill a tensor in place. */
interface WasmHeapBackend {
  makeOutput(shape: number[], dtype: 'float32'): tf.TensorInfo;
  typedArrayFromHeap(info: tf.TensorInfo): Float32Array;
}

/**
 * The image as a float32 [height, width, 3] tensor, converted from bytes straight into the
 * wasm heap. `tf.tensor3d(new Float32Array(data))` allocated 12 MB of JS memory per
 * megapixel; that external memory made V8 run a full mark-compact every few images (about
 * 15 ms per image on the 1 MP bench). An int32 tensor would also cost Human a cast.
 */
function imageTensor(image: RgbImage): tf.Tensor3D {
  if (image.data.length !== image.width * image.height * 3) throw new Error('face models: image data is not width × height RGB');
  const backend = tf.backend() as unknown as WasmHeapBackend;
  const info = backend.makeOutput([image.height, image.width, 3], 'float32');
  backend.typedArrayFromHeap(info).set(image.data);
  return tf.engine().makeTensorFromTensorInfo(info) as tf.Tensor3D;
}

/** Runs detection and the chosen face modules on one decoded RGB image. */
export async function detectFaces(human: Human, image: RgbImage, modules: FaceModules = ALL_MODULES): Promise<FaceResult[]> {
  const tensor = imageTensor(image);
  try {
    // Human merges per-call config into its own, so every flag is set on every call.
    const result = await human.detect(
      tensor as never,
      {
        face: {
          emotion: { enabled: modules.emotion },
          antispoof: { enabled: modules.spoof },
          liveness: { enabled: modules.spoof },
        },
      } as Partial<Config>,
    );
    if (result.error) throw new Error(`face analysis failed: ${result.error}`);
    return result.face;
  } finally {
    tensor.dispose();
  }
}
