import { APP, cookieFor } from '../../controller/pipeline/cookies.js';
import { type Desired, type DesiredFlow, goto } from '../../controller/pipeline/flow.js';
import { PIPELINE } from '../../controller/pipeline/tables.js';

/** The table-miss flow of every table, straight from the pipeline declaration. */
export function compute(): Desired {
  const flows: DesiredFlow[] = PIPELINE.map((t) => ({
    tableId: t.id,
    priority: 0,
    cookie: cookieFor('pipeline', `table-miss/${t.id}`),
    match: [],
    instructions: t.miss.kind === 'goto' ? [goto(t.miss.table)] : [],
  }));
  return { flows, groups: [] };
}

export const appId = APP.pipeline;
