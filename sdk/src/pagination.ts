/**
 * Pages of a list endpoint. `list()` returns a PagePromise: await it for one page, or
 * iterate it with `for await` to walk every item of every page, fetching pages on demand.
 */
import type { Pagination } from './types.js';

export class Page<T> {
  constructor(
    readonly data: T[],
    readonly pagination: Pagination,
    private readonly fetchPage: (page: number) => Promise<Page<T>>,
  ) {}

  hasNextPage(): boolean {
    return this.pagination.page < this.pagination.pages;
  }

  /** The following page; throws when there is none (check hasNextPage first). */
  getNextPage(): Promise<Page<T>> {
    if (!this.hasNextPage()) throw new Error('No next page');
    return this.fetchPage(this.pagination.page + 1);
  }

  /** This page and every later one. */
  async *iterPages(): AsyncGenerator<Page<T>> {
    yield this;
    let page: Page<T> | undefined;
    while ((page ?? this).hasNextPage()) {
      page = await (page ?? this).getNextPage();
      // An empty page (items deleted meanwhile) ends the walk instead of looping.
      if (page.data.length === 0) return;
      yield page;
    }
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<T> {
    for await (const page of this.iterPages()) yield* page.data;
  }
}

export class PagePromise<T> implements Promise<Page<T>>, AsyncIterable<T> {
  readonly [Symbol.toStringTag] = 'PagePromise';
  private readonly promise: Promise<Page<T>>;

  constructor(first: () => Promise<Page<T>>) {
    this.promise = first();
  }

  then<A = Page<T>, B = never>(onFulfilled?: ((page: Page<T>) => A | PromiseLike<A>) | null, onRejected?: ((reason: unknown) => B | PromiseLike<B>) | null): Promise<A | B> {
    return this.promise.then(onFulfilled, onRejected);
  }

  catch<B = never>(onRejected?: ((reason: unknown) => B | PromiseLike<B>) | null): Promise<Page<T> | B> {
    return this.promise.catch(onRejected);
  }

  finally(onFinally?: (() => void) | null): Promise<Page<T>> {
    return this.promise.finally(onFinally);
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<T> {
    yield* await this.promise;
  }
}
