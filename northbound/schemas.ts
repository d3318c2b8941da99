import { type TObject, type TSchema, Type } from '@sinclair/typebox';

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
