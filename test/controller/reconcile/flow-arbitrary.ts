import fc from 'fast-check';
import { cookieFor } from '../../../controller/pipeline/cookies.js';
import { instructionsArb, matchArb } from '../../southbound/openflow/codec/oxm-arbitraries.js';

/** A cookie weft owns (its flows may be removed by a diff); 0 is a foreign flow's. */
export const ownedCookie = cookieFor('overlay', 'x');

/** Random flows in two tables and two priorities, owned or foreign, for diff properties. */
export const diffFlowArb = fc.record({
  tableId: fc.constantFrom(0, 40),
  priority: fc.constantFrom(100, 200),
  cookie: fc.constantFrom(ownedCookie, 0n),
  match: matchArb,
  instructions: instructionsArb,
});
