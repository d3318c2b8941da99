import { runSyncQuiet } from './exec.js';

/**
 * Last-resort cleanup: whatever a lab made is undone when the process exits, even when a test
 * throws or the runner is interrupted. Normal teardown removes entries as it goes.
 */
type Undo = () => void;
const pending = new Map<number, Undo>();
let nextId = 1;
let installed = false;

function runAll(): void {
  for (const undo of [...pending.values()].reverse()) undo();
  pending.clear();
}

export function onExitUndo(undo: Undo): () => void {
  if (!installed) {
    installed = true;
    process.on('exit', runAll);
    for (const sig of ['SIGINT', 'SIGTERM'] as const) {
      process.once(sig, () => {
        runAll();
        process.exit(130);
      });
    }
  }
  const id = nextId++;
  pending.set(id, undo);
  return () => pending.delete(id);
}

export function killPid(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // already gone
  }
}

export const deleteNetnsSync = (name: string): void => runSyncQuiet('ip', ['netns', 'delete', name]);
