/**
 * Child process for the crash tests: writes to an embedded store as fast as it can and prints
 * "<key> <revision>" for every acknowledged commit, until it is killed (kill -9, no cleanup).
 * argv: DIR FIRST_KEY [SNAPSHOT_EVERY]
 */
import { FileStore } from '../../../controller/store/file-store.js';

const [dir, firstText, snapText] = process.argv.slice(2);
const store = await FileStore.open(dir!, snapText ? { snapshotEvery: Number(snapText) } : {});
let next = Number(firstText);
const writeOne = async (): Promise<void> => {
  for (;;) {
    const n = next++;
    const { revision } = await store.commit({
      txs: [{ ops: [{ type: 'put', key: `k${n}`, value: { n, pad: 'x'.repeat(n % 300) } }] }],
    });
    process.stdout.write(`${n} ${revision}\n`);
  }
};
process.stdout.write('ready\n');
await Promise.all(Array.from({ length: 64 }, writeOne));
