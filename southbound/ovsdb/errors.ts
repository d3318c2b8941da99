/** Base of every error the OVSDB layer raises, so callers can tell them from their own bugs. */
export class OvsdbLayerError extends Error {
  override name = 'OvsdbLayerError';
}

/** The byte stream from a peer is not a sequence of JSON values (or one is over the size cap). */
export class OvsdbFramingError extends OvsdbLayerError {
  override name = 'OvsdbFramingError';
}

/** The connection closed, timed out or was never usable; the request may or may not have run. */
export class OvsdbConnectionError extends OvsdbLayerError {
  override name = 'OvsdbConnectionError';
}

/** A request got no reply within its timeout. */
export class OvsdbTimeoutError extends OvsdbConnectionError {
  override name = 'OvsdbTimeoutError';
}

/**
 * OVSDB said no: a JSON-RPC error reply (unknown method, unknown database, ...) or a failed
 * operation inside a transaction (constraint violation, referential integrity violation, unknown
 * column...). `error` and `details` are OVSDB's own words; `operationIndex` points at the failing
 * operation of a transact (equal to the operation count when the commit itself failed).
 */
export class OvsdbError extends OvsdbLayerError {
  override name = 'OvsdbError';
  constructor(
    readonly method: string,
    readonly error: string,
    readonly details?: string,
    readonly operationIndex?: number,
    readonly syntax?: string,
  ) {
    const where = operationIndex === undefined ? '' : ` (operation ${operationIndex})`;
    const detail = details ? `: ${details}` : '';
    const syn = syntax ? ` [syntax ${syntax}]` : '';
    super(`${method}${where} failed: ${error}${detail}${syn}`);
  }

  /** Builds from the error member of a reply or of an operation result. */
  static from(method: string, value: unknown, operationIndex?: number): OvsdbError {
    if (typeof value === 'string') return new OvsdbError(method, value, undefined, operationIndex);
    if (value && typeof value === 'object') {
      const o = value as Record<string, unknown>;
      const error = typeof o.error === 'string' ? o.error : JSON.stringify(value);
      const details = typeof o.details === 'string' ? o.details : undefined;
      const syntax = typeof o.syntax === 'string' ? o.syntax : undefined;
      return new OvsdbError(method, error, details, operationIndex, syntax);
    }
    return new OvsdbError(method, JSON.stringify(value), undefined, operationIndex);
  }
}

/** A value does not fit the schema (unknown table/column, wrong type): caught before sending. */
export class OvsdbSchemaError extends OvsdbLayerError {
  override name = 'OvsdbSchemaError';
}
