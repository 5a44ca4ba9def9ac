import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { type Problem, problemOf } from '../api.ts';

export type Load<T> =
  | { state: 'loading'; reload: () => void }
  | { state: 'failed'; problem: Problem; reload: () => void }
  | { state: 'ready'; data: T; reload: () => void; refreshing: boolean };

/**
 * Loads what a screen shows and reloads it on demand (after a change) or when `deps` change. A reload keeps the old
 * data on screen until the new arrives; an answer that comes back after a newer request started is dropped.
 */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[] = []): Load<T> {
  const [state, setState] = useState<{ data?: T; problem?: Problem; busy: boolean }>({ busy: true });
  const seq = useRef(0);
  const run = useCallback(() => {
    const mine = ++seq.current;
    setState((s) => ({ ...s, busy: true }));
    load().then(
      (data) => mine === seq.current && setState({ data, busy: false }),
      (err: unknown) => mine === seq.current && setState({ problem: problemOf(err), busy: false }),
    );
    // The caller's deps decide when to reload, as with useEffect.
  }, deps);
  useEffect(run, [run]);
  if (state.problem) return { state: 'failed', problem: state.problem, reload: run };
  if (state.data === undefined) return { state: 'loading', reload: run };
  return { state: 'ready', data: state.data, reload: run, refreshing: state.busy };
}

/**
 * A change the user asks for: runs it, remembers the refusal (shown beside the form), and says when it is running so
 * the button can say so and not be pressed twice.
 */
export function useAction<A extends unknown[], T>(act: (...args: A) => Promise<T>) {
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<Problem | null>(null);
  const run = async (...args: A): Promise<T | undefined> => {
    setBusy(true);
    setProblem(null);
    try {
      return await act(...args);
    } catch (err) {
      setProblem(problemOf(err));
      return undefined;
    } finally {
      setBusy(false);
    }
  };
  return { run, busy, problem, clear: () => setProblem(null) };
}

/**
 * An action on one row of a list (revoke a key, restore a contact, change a member): which row is busy, and each row's
 * refusal, shown beside that row until the row's next action succeeds.
 */
export function useRowAction() {
  const [busy, setBusy] = useState<string | null>(null);
  const [problems, setProblems] = useState<Record<string, Problem>>({});
  const run = async (rowId: string, act: () => Promise<unknown>): Promise<boolean> => {
    setBusy(rowId);
    try {
      await act();
      setProblems(({ [rowId]: _, ...rest }) => rest);
      return true;
    } catch (err) {
      setProblems((p) => ({ ...p, [rowId]: problemOf(err) }));
      return false;
    } finally {
      setBusy(null);
    }
  };
  return { run, busy, problemOf: (rowId: string): Problem | null => problems[rowId] ?? null };
}
