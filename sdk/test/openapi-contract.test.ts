/**
 * The SDK's request and response types (src/types.ts) against the server's /openapi.json,
 * so they cannot drift. The TypeScript compiler reads each declared type; every property
 * must exist in the matching schema with a compatible type (literal unions within the
 * schema's enums), a property the SDK marks required must be required by a response schema,
 * and a property a response schema requires must be declared by the SDK.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { resolve } from 'node:path';
import ts from 'typescript';
import { startServer, type TestServer } from './setup.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Schema = any;

const TYPES_FILE = resolve(import.meta.dirname, '../src/types.ts');

/** SDK type → where its schema is in the OpenAPI document, and whether it is a response. */
const CONTRACT: Array<{ type: string; at: (doc: Schema) => Schema; direction: 'response' | 'request' }> = [
  { type: 'JobListResponse', at: (d) => json(d.paths['/api/v1/jobs'].get.responses['200']), direction: 'response' },
  { type: 'JobSummary', at: (d) => json(d.paths['/api/v1/jobs'].get.responses['200']).properties.data.items, direction: 'response' },
  { type: 'CreatedJob', at: (d) => json(d.paths['/api/v1/jobs'].post.responses['200']), direction: 'response' },
  { type: 'JobCreateBody', at: (d) => json(d.paths['/api/v1/jobs'].post.requestBody), direction: 'request' },
  { type: 'Job', at: (d) => json(d.paths['/api/v1/jobs/{id}'].get.responses['200']), direction: 'response' },
  { type: 'FinalizedJob', at: (d) => json(d.paths['/api/v1/jobs/{id}/finalize'].post.responses['200']), direction: 'response' },
  { type: 'CancelledJob', at: (d) => json(d.paths['/api/v1/jobs/{id}/cancel'].post.responses['200']), direction: 'response' },
  { type: 'TaskType', at: (d) => json(d.paths['/api/v1/task-types'].get.responses['200']).properties.data.items, direction: 'response' },
  { type: 'JobListParams', at: (d) => queryAsSchema(d.paths['/api/v1/jobs'].get.parameters), direction: 'request' },
  { type: 'FaceEnrollment', at: (d) => json(d.paths['/api/v1/facesim/v1/enroll'].post.responses['200']), direction: 'response' },
  { type: 'FaceSubject', at: (d) => json(d.paths['/api/v1/facesim/v1/subjects'].get.responses['200']).properties.subjects.items, direction: 'response' },
  { type: 'FaceSearchResponse', at: (d) => json(d.paths['/api/v1/facesim/v1/search'].post.responses['200']), direction: 'response' },
  // Each task type's result document (generated into src/generated.ts from the same schemas).
  ...['AiGeneratedResult', 'DeepFakeResult', 'ForgeryResult', 'SpoofResult', 'FaceIntelligenceResult', 'FaceEmbeddingResult', 'AudioSplitterResult'].map((type) => ({
    type,
    at: (d: Schema) => d.components.schemas[type],
    direction: 'response' as const,
  })),
];

const json = (holder: Schema) => holder.content['application/json'].schema;
const queryAsSchema = (parameters: Schema[]) => ({
  type: 'object',
  properties: Object.fromEntries(parameters.filter((p) => p.in === 'query').map((p) => [p.name, p.schema])),
  required: parameters.filter((p) => p.in === 'query' && p.required).map((p) => p.name),
});

function compare(checker: ts.TypeChecker, type: ts.Type, schema: Schema, path: string, direction: 'response' | 'request', problems: string[]): void {
  // A schema without constraints (an `unknown` field) takes any value.
  if (Object.keys(schema).every((key) => key === 'description' || key === 'title')) return;
  if (schema.anyOf) {
    const members = type.isUnion() ? type.types : [type];
    for (const member of members) {
      const fits = schema.anyOf.some((branch: Schema) => {
        const scratch: string[] = [];
        compare(checker, member, branch, path, direction, scratch);
        return scratch.length === 0;
      });
      if (!fits) problems.push(`${path}: ${checker.typeToString(member)} matches none of ${JSON.stringify(schema.anyOf)}`);
    }
    return;
  }
  if (type.flags & (ts.TypeFlags.Any | ts.TypeFlags.Unknown | ts.TypeFlags.TypeParameter)) return;
  if (type.isUnion()) {
    for (const member of type.types) compare(checker, member, schema, path, direction, problems);
    return;
  }
  const kind = schema.type;
  if (type.isStringLiteral()) {
    if (kind !== 'string') problems.push(`${path}: SDK "${type.value}", schema ${kind}`);
    else if (schema.enum && !schema.enum.includes(type.value)) problems.push(`${path}: SDK allows "${type.value}", schema only ${schema.enum.join('|')}`);
    return;
  }
  if (type.flags & ts.TypeFlags.StringLike) {
    if (kind !== 'string') problems.push(`${path}: SDK string, schema ${kind}`);
    return;
  }
  if (type.flags & ts.TypeFlags.NumberLike) {
    if (kind !== 'number' && kind !== 'integer') problems.push(`${path}: SDK number, schema ${kind}`);
    return;
  }
  if (type.flags & ts.TypeFlags.BooleanLike) {
    if (kind !== 'boolean') problems.push(`${path}: SDK boolean, schema ${kind}`);
    return;
  }
  if (checker.isArrayType(type)) {
    if (kind !== 'array') problems.push(`${path}: SDK array, schema ${kind}`);
    else compare(checker, checker.getTypeArguments(type as ts.TypeReference)[0]!, schema.items, `${path}[]`, direction, problems);
    return;
  }
  if (kind !== 'object') {
    problems.push(`${path}: SDK ${checker.typeToString(type)}, schema ${kind}`);
    return;
  }
  const schemaProperties: Record<string, Schema> = schema.properties ?? {};
  const required = new Set<string>(schema.required ?? []);
  const declared = new Set<string>();
  for (const property of checker.getPropertiesOfType(type)) {
    const name = property.getName();
    declared.add(name);
    const optional = (property.flags & ts.SymbolFlags.Optional) !== 0;
    const propertySchema = schemaProperties[name];
    if (!propertySchema) {
      if (!schema.properties && schema.additionalProperties !== false) continue; // free-form object
      problems.push(`${path}.${name}: declared by the SDK, absent from the schema`);
      continue;
    }
    if (direction === 'response' && !optional && !required.has(name)) problems.push(`${path}.${name}: required in the SDK, optional in the schema`);
    if (direction === 'request' && optional && required.has(name)) problems.push(`${path}.${name}: optional in the SDK, required by the schema`);
    const propertyType = checker.getNonNullableType(checker.getTypeOfSymbol(property));
    compare(checker, propertyType, propertySchema, `${path}.${name}`, direction, problems);
  }
  if (direction === 'response') {
    for (const name of required) if (!declared.has(name)) problems.push(`${path}.${name}: required by the schema, not declared by the SDK`);
  }
}

describe('SDK types against /openapi.json', () => {
  let server: TestServer;
  let doc: Schema;
  let checker: ts.TypeChecker;
  let exports: Map<string, ts.Symbol>;

  before(async () => {
    server = await startServer({}, 'api');
    doc = await (await fetch(`${server.url}/openapi.json`)).json();
    const program = ts.createProgram([TYPES_FILE], { strict: true, target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, noEmit: true, skipLibCheck: true, types: [], lib: ['lib.es2022.d.ts'] });
    checker = program.getTypeChecker();
    const moduleSymbol = checker.getSymbolAtLocation(program.getSourceFile(TYPES_FILE)!)!;
    exports = new Map(checker.getExportsOfModule(moduleSymbol).map((symbol) => [symbol.getName(), symbol]));
  });
  after(() => server.close());

  for (const { type: name, at, direction } of CONTRACT) {
    test(`${name} matches the schema`, () => {
      const symbol = exports.get(name);
      assert.ok(symbol, `src/types.ts exports ${name}`);
      const schema = at(doc);
      assert.ok(schema, `the OpenAPI document has the schema for ${name}`);
      const problems: string[] = [];
      compare(checker, checker.getDeclaredTypeOfSymbol(symbol), schema, name, direction, problems);
      assert.deepEqual(problems, [], `src/types.ts has drifted from /openapi.json:\n${problems.join('\n')}`);
    });
  }

  test('every task type names a result schema the document publishes, and the SDK maps its slug to that type', async () => {
    const key = await server.apiKey((await server.tenant()).tenantId);
    const taskTypes = (await (await fetch(`${server.url}/api/v1/task-types`, { headers: { authorization: `Bearer ${key}` } })).json()).data;
    const bySlug = checker.getDeclaredTypeOfSymbol(exports.get('ResultBySlug')!);
    for (const taskType of taskTypes) {
      assert.ok(doc.components.schemas[taskType.resultSchema], `${taskType.slug}: components.schemas.${taskType.resultSchema}`);
      const property = bySlug.getProperty(taskType.slug);
      assert.ok(property, `ResultBySlug has ${taskType.slug}`);
      assert.equal(checker.typeToString(checker.getTypeOfSymbol(property)), taskType.resultSchema, taskType.slug);
    }
  });

  test('the check itself catches drift (a renamed field, a status the server does not have)', () => {
    const schema = structuredClone(at('FinalizedJob'));
    schema.properties.queuedTime = schema.properties.queuedAt;
    delete schema.properties.queuedAt;
    schema.required = schema.required.map((n: string) => (n === 'queuedAt' ? 'queuedTime' : n));
    schema.properties.status.anyOf = schema.properties.status.anyOf.slice(0, 1);
    const problems: string[] = [];
    compare(checker, checker.getDeclaredTypeOfSymbol(exports.get('FinalizedJob')!), schema, 'FinalizedJob', 'response', problems);
    assert.ok(problems.some((p) => p.includes('FinalizedJob.queuedAt: declared by the SDK, absent')), problems.join('\n'));
    assert.ok(problems.some((p) => p.includes('FinalizedJob.queuedTime: required by the schema')), problems.join('\n'));
    assert.ok(problems.some((p) => p.includes('FinalizedJob.status') && p.includes('"processing"')), problems.join('\n'));
  });

  function at(name: string): Schema {
    return CONTRACT.find((entry) => entry.type === name)!.at(doc);
  }
});
