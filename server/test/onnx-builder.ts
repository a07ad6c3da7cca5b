/**
 * Builds tiny ONNX models for tests by writing the protobuf bytes directly (onnx.proto3:
 * ModelProto, GraphProto, NodeProto, TensorProto, ValueInfoProto), so no model file or
 * protobuf library is needed.
 */

function varint(value: number): number[] {
  const bytes: number[] = [];
  let v = BigInt(value);
  if (v < 0n) v += 1n << 64n;
  do {
    let byte = Number(v & 0x7fn);
    v >>= 7n;
    if (v > 0n) byte |= 0x80;
    bytes.push(byte);
  } while (v > 0n);
  return bytes;
}
const key = (field: number, wire: number) => varint((field << 3) | wire);
const intField = (field: number, value: number) => [...key(field, 0), ...varint(value)];
const bytesField = (field: number, payload: number[] | Uint8Array) => [...key(field, 2), ...varint(payload.length), ...payload];
const stringField = (field: number, text: string) => bytesField(field, [...Buffer.from(text, 'utf8')]);

const FLOAT = 1;

function tensor(name: string, dims: number[], values: number[]): number[] {
  const raw = new Uint8Array(new Float32Array(values).buffer);
  return [...dims.flatMap((d) => intField(1, d)), ...intField(2, FLOAT), ...stringField(8, name), ...bytesField(9, raw)];
}

/** A float tensor's name and shape; a string dimension is symbolic (any size). */
function valueInfo(name: string, dims: Array<number | string>): number[] {
  const shape = dims.flatMap((d) => bytesField(1, typeof d === 'number' ? intField(1, d) : stringField(2, d)));
  const tensorType = [...intField(1, FLOAT), ...bytesField(2, shape)];
  return [...stringField(1, name), ...bytesField(2, bytesField(1, tensorType))];
}

function node(opType: string, inputs: string[], outputs: string[], name: string, attributes: number[][] = []): number[] {
  return [...inputs.flatMap((i) => stringField(1, i)), ...outputs.flatMap((o) => stringField(2, o)), ...stringField(3, name), ...stringField(4, opType), ...attributes.flatMap((a) => bytesField(5, a))];
}


function model(graph: number[], irVersion = 8): Uint8Array {
  const opset = [...stringField(1, ''), ...intField(2, 13)];
  return new Uint8Array([...intField(1, irVersion), ...stringField(2, 'mediaproof-tests'), ...bytesField(7, graph), ...bytesField(8, opset)]);
}

/**
 * input [1, 3, size, size] → GlobalAveragePool → Flatten → Gemm(weights [3, 1], bias [1]) →
 * output [1, 1]: a logit that is a linear function of the mean of each input channel.
 */
export function channelMeanLinearModel(size: number, weights: [number, number, number], bias: number): Uint8Array {
  return model([
    ...bytesField(1, node('GlobalAveragePool', ['input'], ['pooled'], 'pool')),
    ...bytesField(1, node('Flatten', ['pooled'], ['flat'], 'flatten')),
    ...bytesField(1, node('Gemm', ['flat', 'W', 'B'], ['logit'], 'gemm')),
    ...stringField(2, 'channel-mean-linear'),
    ...bytesField(5, tensor('W', [3, 1], weights)),
    ...bytesField(5, tensor('B', [1], [bias])),
    ...bytesField(11, valueInfo('input', [1, 3, size, size])),
    ...bytesField(12, valueInfo('logit', [1, 1])),
  ]);
}

/** y = sigmoid(mean(|x|)) over a float32 [1, samples] waveform, output [1, 1]. */
export function meanAbsSigmoidModel(): Uint8Array {
  const axes = [...stringField(1, 'axes'), ...intField(8, 1), ...intField(20, 7 /* INTS */)];
  const keepdims = [...stringField(1, 'keepdims'), ...intField(3, 1), ...intField(20, 2 /* INT */)];
  return model(
    [
      ...bytesField(1, node('Abs', ['x'], ['a'], 'abs')),
      ...bytesField(1, node('ReduceMean', ['a'], ['m'], 'mean', [axes, keepdims])),
      ...bytesField(1, node('Sigmoid', ['m'], ['y'], 'sigmoid')),
      ...stringField(2, 'mean_abs_sigmoid'),
      ...bytesField(11, valueInfo('x', [1, 'samples'])),
      ...bytesField(12, valueInfo('y', [1, 1])),
    ],
    7,
  );
}
