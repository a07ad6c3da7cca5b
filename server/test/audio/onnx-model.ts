/**
 * Builds a tiny ONNX model by hand (protobuf wire format, onnx.proto field numbers) so the
 * model-pack loader can be tested without shipping a model: y = sigmoid(mean(|x|)) over a
 * float32 [1, samples] input, output [1, 1].
 */

function varint(value: number): number[] {
  const bytes: number[] = [];
  let v = value;
  while (v >= 0x80) {
    bytes.push((v & 0x7f) | 0x80);
    v = Math.floor(v / 128);
  }
  bytes.push(v);
  return bytes;
}

const field = {
  int: (number: number, value: number) => [...varint(number << 3), ...varint(value)],
  bytes: (number: number, payload: number[]) => [...varint((number << 3) | 2), ...varint(payload.length), ...payload],
  string: (number: number, text: string) => field.bytes(number, [...Buffer.from(text, 'utf8')]),
};

function tensorValueInfo(name: string, dims: Array<number | string>): number[] {
  const shape = dims.flatMap((dim) => field.bytes(1, typeof dim === 'number' ? field.int(1, dim) : field.string(2, dim)));
  const tensorType = [...field.int(1, 1 /* FLOAT */), ...field.bytes(2, shape)];
  return [...field.string(1, name), ...field.bytes(2, field.bytes(1, tensorType))];
}

function node(op: string, inputs: string[], outputs: string[], attributes: number[][] = []): number[] {
  return [
    ...inputs.flatMap((i) => field.string(1, i)),
    ...outputs.flatMap((o) => field.string(2, o)),
    ...field.string(3, `${op.toLowerCase()}_node`),
    ...field.string(4, op),
    ...attributes.flatMap((a) => field.bytes(5, a)),
  ];
}

export function meanAbsSigmoidModel(): Uint8Array {
  const axes = [...field.string(1, 'axes'), ...field.int(8, 1), ...field.int(20, 7 /* INTS */)];
  const keepdims = [...field.string(1, 'keepdims'), ...field.int(3, 1), ...field.int(20, 2 /* INT */)];
  const graph = [
    ...field.bytes(1, node('Abs', ['x'], ['a'])),
    ...field.bytes(1, node('ReduceMean', ['a'], ['m'], [axes, keepdims])),
    ...field.bytes(1, node('Sigmoid', ['m'], ['y'])),
    ...field.string(2, 'mean_abs_sigmoid'),
    ...field.bytes(11, tensorValueInfo('x', [1, 'samples'])),
    ...field.bytes(12, tensorValueInfo('y', [1, 1])),
  ];
  const model = [
    ...field.int(1, 7), // ir_version
    ...field.string(2, 'mediaproof-test'),
    ...field.bytes(7, graph),
    ...field.bytes(8, [...field.string(1, ''), ...field.int(2, 13)]),
  ];
  return new Uint8Array(model);
}
