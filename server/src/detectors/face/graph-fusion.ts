/**
 * Load-time rewrite of Keras-exported MobileNet graphs (Human's faceres, the face-embedding
 * model) into the fused ops the tfjs wasm backend runs fast.
 *
 * Keras exports ReLU6 as Relu → Minimum(6) → Maximum(0), and batch norm as a Conv2D followed
 * by Add(bias), or a DepthwiseConv2dNative followed by Mul(scale) and Add(bias). On wasm the
 * scalar-broadcast Minimum and Maximum cost about six times a Relu6 and made up over half of
 * faceres' run time. The rewrite is exact algebra:
 * - Relu → Minimum(6) → Maximum(0)            ⇒ Relu6
 * - Conv2D → Add(b) → Relu6                     ⇒ _FusedConv2D(BiasAdd, Relu6)
 * - DepthwiseConv2dNative(k) → Mul(s) → Add(b) → Relu6
 *                                               ⇒ FusedDepthwiseConv2dNative(k·s, BiasAdd, Relu6)
 *   (a depthwise convolution scales each channel by its own kernel, so k·s folds the scale in)
 * Graphs without the pattern come back unchanged.
 */
import * as tf from '@tensorflow/tfjs-core';

interface GraphNode {
  name: string;
  op: string;
  input?: string[];
  attr?: Record<string, unknown>;
  [key: string]: unknown;
}

interface GraphTopology {
  node: GraphNode[];
  [key: string]: unknown;
}

const base64 = (text: string) => Buffer.from(text).toString('base64');
const FUSED_BIAS_RELU6 = {
  num_args: { i: '1' },
  fused_ops: { list: { s: [base64('BiasAdd'), base64('Relu6')] } },
  epsilon: { f: 0 },
};

/** "name:0" and "^name" (control input) both refer to node `name`. */
const nodeName = (input: string) => input.replace(/^\^/, '').split(':')[0]!;

/**
 * Returns the artifacts with the patterns above fused, and how many ReLU6 chains were
 * rewritten. Weights are re-encoded as float32 when a rewrite happens (a folded kernel is
 * no longer what the float16 file held).
 */
export async function fuseRelu6Chains(artifacts: tf.io.ModelArtifacts): Promise<{ artifacts: tf.io.ModelArtifacts; fused: number }> {
  const topology = artifacts.modelTopology as GraphTopology | undefined;
  if (!topology?.node || !artifacts.weightSpecs || !artifacts.weightData) return { artifacts, fused: 0 };
  if (!topology.node.some((node) => node.op === 'Maximum')) return { artifacts, fused: 0 };

  const weights = tf.io.decodeWeights(artifacts.weightData, artifacts.weightSpecs);
  try {
    const byName = new Map(topology.node.map((node) => [node.name, node]));
    const consumers = new Map<string, number>();
    for (const node of topology.node) for (const input of node.input ?? []) consumers.set(nodeName(input), (consumers.get(nodeName(input)) ?? 0) + 1);

    const single = (node: GraphNode | undefined): node is GraphNode => !!node && consumers.get(node.name) === 1;
    const constant = (input: string | undefined) => (input === undefined ? undefined : weights[nodeName(input)]);
    const scalarIs = (input: string | undefined, value: number) => {
      const tensor = constant(input);
      return !!tensor && tensor.size === 1 && tensor.dataSync()[0] === value;
    };
    /** The non-constant operand of a binary op and its constant one, whichever order they come in. */
    const operands = (node: GraphNode): [string, string] | null => {
      const [a, b] = node.input ?? [];
      if (a === undefined || b === undefined || node.input!.length !== 2) return null;
      if (constant(b) && !constant(a)) return [a, b];
      if (constant(a) && !constant(b)) return [b, a];
      return null;
    };
    const channelVector = (input: string, channels?: number) => {
      const tensor = constant(input);
      return !!tensor && tensor.rank === 1 && (channels === undefined || tensor.shape[0] === channels);
    };

    const removed = new Set<string>();
    const replacements = new Map<string, GraphNode>();
    let fused = 0;
    for (const maximum of topology.node) {
      if (maximum.op !== 'Maximum') continue;
      const outer = operands(maximum);
      if (!outer || !scalarIs(outer[1], 0)) continue;
      const minimum = byName.get(nodeName(outer[0]));
      if (!single(minimum) || minimum.op !== 'Minimum') continue;
      const inner = operands(minimum);
      if (!inner || !scalarIs(inner[1], 6)) continue;
      const relu = byName.get(nodeName(inner[0]));
      if (!single(relu) || relu.op !== 'Relu' || relu.input?.length !== 1) continue;
      const preActivation = relu.input[0]!;
      removed.add(minimum.name).add(relu.name);
      fused++;

      // Try to fold the bias (and a depthwise scale) into the convolution before it.
      const add = byName.get(nodeName(preActivation));
      const addOperands = single(add) && ['Add', 'AddV2', 'BiasAdd'].includes(add.op) ? operands(add) : null;
      const beforeAdd = addOperands ? byName.get(nodeName(addOperands[0])) : undefined;
      if (add && addOperands && single(beforeAdd) && channelVector(addOperands[1])) {
        const bias = addOperands[1];
        if (beforeAdd.op === 'Conv2D') {
          replacements.set(maximum.name, {
            ...beforeAdd,
            name: maximum.name,
            op: '_FusedConv2D',
            input: [...beforeAdd.input!, bias],
            attr: { ...beforeAdd.attr, ...FUSED_BIAS_RELU6 },
          });
          removed.add(add.name).add(beforeAdd.name);
          continue;
        }
        const mulOperands = beforeAdd.op === 'Mul' ? operands(beforeAdd) : null;
        const depthwise = mulOperands ? byName.get(nodeName(mulOperands[0])) : undefined;
        const kernelName = depthwise?.input?.[1];
        const kernel = constant(kernelName);
        if (
          mulOperands &&
          single(depthwise) &&
          depthwise.op === 'DepthwiseConv2dNative' &&
          kernel?.rank === 4 &&
          kernel.shape[3] === 1 &&
          consumers.get(nodeName(kernelName!)) === 1 &&
          channelVector(mulOperands[1], kernel.shape[2]) &&
          channelVector(bias, kernel.shape[2])
        ) {
          const scale = constant(mulOperands[1])!;
          weights[nodeName(kernelName!)] = tf.tidy(() => tf.mul(kernel, tf.reshape(scale, [1, 1, scale.shape[0]!, 1])));
          kernel.dispose();
          replacements.set(maximum.name, {
            ...depthwise,
            name: maximum.name,
            op: 'FusedDepthwiseConv2dNative',
            input: [...depthwise.input!, bias],
            attr: { ...depthwise.attr, ...FUSED_BIAS_RELU6 },
          });
          removed.add(add.name).add(beforeAdd.name).add(depthwise.name);
          continue;
        }
      }
      replacements.set(maximum.name, { name: maximum.name, op: 'Relu6', input: [preActivation], attr: { T: maximum.attr?.['T'] } });
    }
    if (fused === 0) return { artifacts, fused: 0 };

    const nodes = topology.node.filter((node) => !removed.has(node.name)).map((node) => replacements.get(node.name) ?? node);
    // Constants only the removed nodes read (the 6 and 0, the folded scales) are dropped.
    const used = new Set(nodes.flatMap((node) => (node.input ?? []).map(nodeName)));
    const kept = nodes.filter((node) => node.op !== 'Const' || used.has(node.name));
    const keptWeights: tf.NamedTensorMap = {};
    for (const node of kept) if (node.op === 'Const' && weights[node.name]) keptWeights[node.name] = weights[node.name]!;
    const encoded = await tf.io.encodeWeights(keptWeights);
    return {
      artifacts: { ...artifacts, modelTopology: { ...topology, node: kept }, weightSpecs: encoded.specs, weightData: encoded.data },
      fused,
    };
  } finally {
    tf.dispose(Object.values(weights));
  }
}
