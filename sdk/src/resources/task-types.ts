/** GET /api/v1/task-types: the task types this deployment runs, and which have a detector. */
import type { Mediaproof, RequestOptions } from '../client.js';
import { InvalidTaskTypeError } from '../errors.js';
import type { TaskType } from '../types.js';

export class TaskTypes {
  private cache: Promise<TaskType[]> | undefined;

  constructor(private readonly client: Mediaproof) {}

  async list(options?: RequestOptions): Promise<TaskType[]> {
    const response = await this.client.request<{ data: TaskType[] }>({ ...options, method: 'GET', path: '/api/v1/task-types' });
    return response.data;
  }

  /** One task type by id or slug (the list is fetched once per client and kept). */
  async retrieve(idOrSlug: number | string, options?: RequestOptions): Promise<TaskType> {
    this.cache ??= this.list(options).catch((error: unknown) => {
      this.cache = undefined;
      throw error;
    });
    const all = await this.cache;
    const found = all.find((t) => t.id === Number(idOrSlug) || t.slug === idOrSlug);
    if (!found) {
      throw new InvalidTaskTypeError(`Unknown task type "${idOrSlug}"; known: ${all.map((t) => t.slug).join(', ')}`, { code: 'INVALID_TASK_TYPE', statusCode: 400 });
    }
    return found;
  }
}
