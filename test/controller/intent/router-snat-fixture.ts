import type { RouterCreate } from '../../../controller/intent/model.js';
import type { IntentService } from '../../../controller/intent/service.js';
import { redBlueEachTest, seedExternal } from './router-fixture.js';

/**
 * The world of the SNAT intent tests (router-snat*.test.ts): red's networks web 10.0.0.0/24, db
 * 10.0.1.0/24 and ext 10.3.0.0/24 (the external one); r1 is on web (10.0.0.1) and ext
 * (10.3.0.1). Endpoint vm holds 10.0.0.5 on web; 10.3.0.200 is an address no endpoint holds.
 */

/** This test's intent service (an ES module binding: it follows each test's new service). */
export let svc: IntentService;

/** A fresh world for every test of the file that calls it. */
export function snatWorldEachTest(): void {
  redBlueEachTest((s) => {
    svc = s;
  }, seedExternal);
}

export const interfaces = [
  { networkId: 'web', ip: '10.0.0.1' },
  { networkId: 'ext', ip: '10.3.0.1' },
];
export type Snat = RouterCreate['snat'];
/** r1 on web and ext, with this SNAT (none when undefined) and more. */
export const put = (snat?: Snat, more: Partial<RouterCreate> = {}) =>
  svc.put('router', 'r1', {
    tenantId: 'red',
    name: 'r1',
    interfaces,
    ...(snat === undefined ? {} : { snat }),
    ...more,
  });
/** The stored router (with its revision), to show a refused write changed nothing. */
export const snapshot = () => structuredClone(svc.find('router', 'r1'));
