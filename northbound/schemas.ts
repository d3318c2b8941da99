import { type TObject, type TSchema, Type } from '@sinclair/typebox';
import { BATCH_KINDS, BATCH_OP_TYPES, MAX_BATCH_OPS } from '../controller/intent/batch.js';

/** `/v1/<resource>/:id` path parameters. */
export const IdParams = Type.Object({
  id: Type.String({
    minLength: 1,
    maxLength: 64,
    pattern: '^[A-Za-z0-9][A-Za-z0-9._:-]*$',
    description: 'object id',
  }),
});

export const maxPageSize = 10_000;
export const defaultPageSize = 100;

/** Pagination shared by every list: `limit` and the opaque `cursor` of the previous page. */
export const PageQuery = {
  limit: Type.Integer({ minimum: 1, maximum: maxPageSize, default: defaultPageSize }),
  cursor: Type.Optional(
    Type.String({ minLength: 1, maxLength: 256, description: 'nextCursor of the previous page' }),
  ),
};

/** A page of objects plus the store revision the page was read at. */
export const pageOf = <T extends TSchema>(item: T, title: string): TObject =>
  Type.Object(
    {
      items: Type.Array(item),
      nextCursor: Type.Optional(Type.String({ description: 'absent on the last page' })),
      revision: Type.Integer({ minimum: 0, description: 'store revision the list was read at' }),
    },
    { title },
  );

export const DeletedBody = Type.Object(
  {
    id: Type.String(),
    deleted: Type.Literal(true),
    revision: Type.Integer({ minimum: 0, description: 'store revision the delete produced' }),
  },
  { title: 'Deleted' },
);

// ---------- POST /v1/batch ----------

/** A string from a fixed list; ajv then reports "must be one of ..." naming the values. */
const oneOf = <T extends string>(values: readonly T[], description: string) =>
  Type.Unsafe<T>({ type: 'string', enum: [...values], description });

export const BatchOpSchema = Type.Object(
  {
    op: oneOf(BATCH_OP_TYPES, 'create (POST), replace (PUT: create or replace whole) or delete'),
    kind: oneOf(BATCH_KINDS, 'intent kind (tokens have their own route)'),
    id: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 64,
        pattern: '^[A-Za-z0-9][A-Za-z0-9._:-]*$',
        description: 'object id; required for replace and delete',
      }),
    ),
    ifMatch: Type.Optional(
      Type.Integer({ minimum: 1, description: 'replace/delete: the revision (ETag) the object must be at' }),
    ),
    cascade: Type.Optional(Type.Boolean({ description: 'delete: remove dependants too' })),
    body: Type.Optional(
      Type.Object(
        {},
        {
          additionalProperties: true,
          description:
            'create/replace: the object exactly as POST/PUT /v1/<kind> takes it (e.g. NetworkCreate); checked per op',
        },
      ),
    ),
  },
  { additionalProperties: false, title: 'BatchOp' },
);

export const BatchRequest = Type.Object(
  { ops: Type.Array(BatchOpSchema, { minItems: 1, maxItems: MAX_BATCH_OPS }) },
  { additionalProperties: false, title: 'BatchRequest' },
);

export const BatchQuery = Type.Object({
  dryRun: Type.Optional(
    oneOf(['1', 'true', '0', 'false'] as const, 'validate every op and report results; commit nothing'),
  ),
});

export const BatchOpResultSchema = Type.Object(
  {
    index: Type.Integer({ minimum: 0, description: 'position of the op in the request' }),
    op: Type.String(),
    kind: Type.String(),
    id: Type.String({ description: 'the object id (generated for creates without one)' }),
    revision: Type.Integer({ minimum: 0, description: "the object's revision after the batch" }),
    etag: Type.String({ description: 'the same revision as an ETag, for a later If-Match' }),
    created: Type.Boolean({ description: 'the object did not exist before' }),
    changed: Type.Boolean({ description: 'false: a replace with the current content (not written)' }),
    deleted: Type.Optional(
      Type.Array(Type.Object({ kind: Type.String(), id: Type.String() }), {
        description: 'deletes: every object removed, this one first',
      }),
    ),
  },
  { title: 'BatchOpResult' },
);

export const BatchResponse = Type.Object(
  {
    revision: Type.Integer({
      minimum: 0,
      description: "the batch's revision when it wrote, else the revision the intent is at",
    }),
    committed: Type.Boolean({ description: 'false for a dry run, a replay, or nothing to change' }),
    dryRun: Type.Boolean(),
    replayed: Type.Boolean({ description: 'an Idempotency-Key repeat: the first result, nothing written' }),
    results: Type.Array(BatchOpResultSchema),
  },
  { title: 'BatchResult' },
);
