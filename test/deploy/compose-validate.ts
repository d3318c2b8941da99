import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import AjvModule from 'ajv';
import { parse } from 'yaml';

/**
 * Checks a Compose file without a Docker engine: YAML parsing (with merge keys, as Compose
 * accepts them) and validation against the Compose Specification's JSON schema, vendored beside
 * this file (see README.md here for its source and license).
 */

const here = dirname(fileURLToPath(import.meta.url));
export const COMPOSE_SCHEMA_PATH = join(here, 'compose-spec.json');

export interface ComposeCheck {
  ok: boolean;
  /** One line per problem: `<json path> <message>`. */
  errors: string[];
  doc: unknown;
}

// ajv is CommonJS; under NodeNext its class is the default export's `default`.
const Ajv = AjvModule.default;

let cached: ((doc: unknown) => ComposeCheck) | undefined;

function compile(): (doc: unknown) => ComposeCheck {
  const schema = JSON.parse(readFileSync(COMPOSE_SCHEMA_PATH, 'utf8')) as Record<string, unknown>;
  // The schema names its draft by an https URL that ajv does not register under that name, and
  // uses the later `deprecated` annotation: validate it as draft-07 without strict keyword checks.
  delete schema.$schema;
  const ajv = new Ajv({ strict: false, allErrors: true });
  const validate = ajv.compile(schema);
  return (doc) => {
    const ok = validate(doc) === true;
    const errors = (validate.errors ?? []).map((e) => {
      const extra =
        e.keyword === 'additionalProperties'
          ? ` '${(e.params as { additionalProperty: string }).additionalProperty}'`
          : '';
      return `${e.instancePath || '/'} ${e.message ?? e.keyword}${extra}`;
    });
    return { ok, errors, doc };
  };
}

/** Parses Compose YAML text and validates it; a YAML syntax error is reported as an error too. */
export function checkComposeText(text: string): ComposeCheck {
  let doc: unknown;
  try {
    doc = parse(text, { merge: true });
  } catch (err) {
    return { ok: false, errors: [`YAML: ${(err as Error).message}`], doc: undefined };
  }
  return checkComposeDoc(doc);
}

export function checkComposeDoc(doc: unknown): ComposeCheck {
  cached ??= compile();
  return cached(doc);
}
