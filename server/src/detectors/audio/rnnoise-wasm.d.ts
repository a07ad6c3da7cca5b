/** The package ships no types: its default export is an Emscripten module factory. */
declare module '@echogarden/rnnoise-wasm' {
  const factory: (options?: { wasmBinary?: Uint8Array }) => Promise<unknown>;
  export default factory;
}
