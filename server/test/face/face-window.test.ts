/**
 * The square window the face models are cut from (`squareAroundBox`): always `side` × `side`,
 * the image's own pixels where the square lies inside it and its nearest edge pixel outside, for
 * a face anywhere in the frame, including one touching or leaving the right or bottom edge
 * (those threw "bad extract area" before, and near the top or left came out larger than asked);
 * and the liveness sharpness cue on a box reaching past the frame.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { squareAroundBox } from '../../src/detectors/face/image-input.js';
import { blurCue } from '../../src/detectors/face/liveness-cues.js';

const WIDTH = 100;
const HEIGHT = 80;
/** Every pixel says where it is: red = x, green = y, blue = 7. */
const image = {
  width: WIDTH,
  height: HEIGHT,
  data: Uint8Array.from({ length: WIDTH * HEIGHT * 3 }, (_, i) => [Math.floor(i / 3) % WIDTH, Math.floor(i / 3 / WIDTH), 7][i % 3]!),
};
const clamp = (value: number, low: number, high: number) => Math.min(high, Math.max(low, value));

test('the face window is the requested square, edge-repeated where it leaves the image, wherever the face is', async () => {
  const side = 60;
  const boxes: Array<[number, number, number, number]> = [
    [40, 30, 20, 20], // inside
    [0, 0, 20, 20], // top-left corner
    [85, 65, 15, 15], // bottom-right corner
    [90, 10, 30, 30], // partly off the right edge
    [10, 70, 20, 20], // partly off the bottom edge
    [-40, -40, 10, 10], // wholly outside (a box a tracker extrapolated)
    [0, 0, 100, 80], // the whole frame
  ];
  for (const box of boxes) {
    const window = await squareAroundBox(image, box, side);
    assert.deepEqual([window.width, window.height, window.channels], [side, side, 3], `box ${box}`);
    const left = Math.round(box[0] + box[2] / 2 - side / 2);
    const top = Math.round(box[1] + box[3] / 2 - side / 2);
    for (const [x, y] of [[0, 0], [side - 1, 0], [0, side - 1], [side - 1, side - 1], [side >> 1, side >> 1]] as const) {
      const i = (y * side + x) * 3;
      const expected = [clamp(left + x, 0, WIDTH - 1), clamp(top + y, 0, HEIGHT - 1), 7];
      assert.deepEqual([...window.data.subarray(i, i + 3)], expected, `box ${box} pixel ${x},${y}`);
    }
  }
});

test('the sharpness cue measures a face whose box reaches past the frame instead of throwing', async () => {
  for (const box of [[70, 50, 60, 60], [99, 79, 50, 50]] as Array<[number, number, number, number]>) {
    const cue = await blurCue(image, box);
    assert.equal(typeof cue.score, 'number', `box ${box}: ${JSON.stringify(cue.evidence)}`);
  }
});
