/**
 * Coalesces reads by key into one statement per batch, as DataLoader does for GraphQL
 * resolvers: the reads asked for in one turn of the event loop (the requests whose sockets
 * were ready together) go out together once that turn's I/O is handled, with at most
 * `maxInFlight` statements out; reads arriving while that many are out go with the next.
 * A lone read waits only for the end of its turn; a busy server pays one statement, and on
 * PostgreSQL one round trip, for many reads.
 *
 * Every read is sent after it was asked for, so it sees every write committed before.
 */
export class ReadBatcher<Key, Value> {
  private waiting: Array<{ key: Key; resolve: (value: Value | undefined) => void; reject: (error: unknown) => void }> = [];
  private inFlight = 0;
  private sendScheduled = false;

  /**
   * @param readMany reads the values of `keys` in one statement; a key with no value is absent.
   * @param keyOf the string under which `readMany` returns a key's value.
   */
  constructor(
    private readonly readMany: (keys: Key[]) => Promise<Map<string, Value>>,
    private readonly keyOf: (key: Key) => string,
    private readonly options: { maxInFlight: number; maxBatch: number },
  ) {}

  read(key: Key): Promise<Value | undefined> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ key, resolve, reject });
      if (!this.sendScheduled) {
        this.sendScheduled = true;
        setImmediate(() => {
          this.sendScheduled = false;
          this.sendWaiting();
        });
      }
    });
  }

  private sendWaiting(): void {
    while (this.inFlight < this.options.maxInFlight && this.waiting.length) {
      const batch = this.waiting.splice(0, this.options.maxBatch);
      this.inFlight++;
      this.readMany(batch.map((read) => read.key))
        .then(
          (found) => {
            for (const read of batch) read.resolve(found.get(this.keyOf(read.key)));
          },
          (error: unknown) => {
            for (const read of batch) read.reject(error);
          },
        )
        .finally(() => {
          this.inFlight--;
          this.sendWaiting();
        });
    }
  }
}
