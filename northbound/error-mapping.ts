import type { FastifyError } from 'fastify';
import { ApiError, type ErrorCode } from './errors.js';

/** One ajv error as fastify hands it over (the subset we read). */
interface ValidationIssue {
  instancePath: string;
  keyword: string;
  message?: string;
  params: Record<string, unknown>;
}

/** `/subnets/0/cidr` -> `subnets.0.cidr`; JSON-pointer escapes undone. */
const pointerToField = (pointer: string): string =>
  pointer
    .split('/')
    .filter((p) => p !== '')
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'))
    .join('.');

const join = (base: string, leaf: unknown): string =>
  typeof leaf === 'string' && leaf !== '' ? (base === '' ? leaf : `${base}.${leaf}`) : base;

/** The field an ajv issue is about, including the property a `required` or `additionalProperties` names. */
export const fieldOfIssue = (issue: ValidationIssue): string => {
  const base = pointerToField(issue.instancePath);
  if (issue.keyword === 'required') return join(base, issue.params.missingProperty);
  if (issue.keyword === 'additionalProperties') return join(base, issue.params.additionalProperty);
  return base;
};

const reasonOfIssue = (issue: ValidationIssue): string => {
  if (issue.keyword === 'required') return 'is required';
  if (issue.keyword === 'additionalProperties') return 'is not a known field';
  if (issue.keyword === 'enum' && Array.isArray(issue.params.allowedValues)) {
    return `must be one of ${issue.params.allowedValues.map((v) => JSON.stringify(v)).join(', ')}`;
  }
  return issue.message ?? `fails ${issue.keyword}`;
};

const partName: Record<string, string> = {
  body: 'body',
  querystring: 'query parameter',
  params: 'path parameter',
  headers: 'header',
};

/**
 * Unions (e.g. protocol: 'tcp' | 'udp' ...) make ajv report one issue per branch; the first
 * issue with the deepest path is the most specific one to show.
 */
const mostSpecific = (issues: ValidationIssue[]): ValidationIssue => {
  let best = issues[0]!;
  for (const issue of issues) {
    if (fieldOfIssue(issue).length > fieldOfIssue(best).length) best = issue;
  }
  return best;
};

/**
 * A union of literals (`'off' | 'denied' | ...`) fails as one `const` issue per value and an
 * `anyOf`: "must be equal to constant" says nothing useful, so name the values as `enum` does.
 */
const literalChoices = (issues: ValidationIssue[], field: string): string | undefined => {
  const here = issues.filter((i) => fieldOfIssue(i) === field);
  const consts = here.filter((i) => i.keyword === 'const');
  const onlyLiterals = here.every((i) => i.keyword === 'const' || i.keyword === 'anyOf');
  if (consts.length === 0 || !onlyLiterals || !here.some((i) => i.keyword === 'anyOf')) return undefined;
  return `must be one of ${consts.map((i) => JSON.stringify(i.params.allowedValue)).join(', ')}`;
};

export const validationToApiError = (issues: ValidationIssue[], context: string | undefined): ApiError => {
  const issue = mostSpecific(issues);
  const field = fieldOfIssue(issue);
  const where = partName[context ?? 'body'] ?? context ?? 'body';
  const subject = field === '' ? `${where}` : `${where} '${field}'`;
  const message = `${subject} ${literalChoices(issues, field) ?? reasonOfIssue(issue)}`;
  return new ApiError('invalid', message, field === '' ? undefined : field, {
    location: context ?? 'body',
    issues: issues.slice(0, 10).map((i) => ({ field: fieldOfIssue(i), reason: reasonOfIssue(i) })),
  });
};

const codeOfStatus = (status: number): ErrorCode => {
  switch (status) {
    case 401:
      return 'unauthorized';
    case 403:
      return 'forbidden';
    case 404:
      return 'not_found';
    case 409:
      return 'conflict';
    case 410:
      return 'gone';
    case 412:
      return 'precondition_failed';
    case 413:
      return 'payload_too_large';
    case 415:
      return 'unsupported_media_type';
    case 503:
      return 'unavailable';
    case 504:
      return 'timeout';
    default:
      return status >= 400 && status < 500 ? 'invalid' : 'internal';
  }
};

/**
 * Anything thrown inside a request -> the one API error shape. Fastify's own errors (validation,
 * bad JSON, body too large, wrong content type) keep their status; unknown errors become 500
 * without leaking internals.
 */
export const toApiError = (err: unknown, translate?: (err: unknown) => ApiError | undefined): ApiError => {
  if (err instanceof ApiError) return err;
  const translated = translate?.(err);
  if (translated) return translated;
  const fe = err as Partial<FastifyError> & { validation?: ValidationIssue[] };
  if (Array.isArray(fe.validation) && fe.validation.length > 0) {
    return validationToApiError(fe.validation, fe.validationContext);
  }
  const status = typeof fe.statusCode === 'number' ? fe.statusCode : 500;
  if (status >= 400 && status < 500) {
    return new ApiError(codeOfStatus(status), fe.message ?? 'bad request');
  }
  return new ApiError('internal', 'internal error');
};
