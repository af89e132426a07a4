/**
 * The story as the dashboard's caption lines see it (`CaptionSource` of src/dashboard/Caption.tsx,
 * met by shape): the step's caption, the last outcome, paused or not; `space` and `n` go to the
 * pacer. Fed with the runner's events.
 */
import type { DemoPacer } from './demo-pacer.js';
import type { DemoEvent } from './demo-runner.js';

export interface DemoCaptionState {
  text: string;
  progress?: string;
  detail?: string;
  paused: boolean;
  finished: boolean;
}

export class DemoCaption {
  readonly #pacer: Pick<DemoPacer, 'paused' | 'togglePause' | 'next' | 'onChange'>;
  readonly #listeners = new Set<() => void>();
  #state: DemoCaptionState;

  constructor(pacer: Pick<DemoPacer, 'paused' | 'togglePause' | 'next' | 'onChange'>) {
    this.#pacer = pacer;
    this.#state = { text: 'The story starts as soon as the fleet is up', paused: pacer.paused, finished: false };
    pacer.onChange(() => this.#set({ paused: pacer.paused }));
  }

  /** Arrow functions: React calls them detached (`useSyncExternalStore(source.subscribe, source.current)`). */
  readonly current = (): DemoCaptionState => this.#state;

  readonly subscribe = (listener: () => void): (() => void) => {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  };

  readonly togglePause = (): void => this.#pacer.togglePause();

  readonly next = (): void => this.#pacer.next();

  /** Takes one event of the runner. */
  readonly onEvent = (event: DemoEvent): void => {
    switch (event.kind) {
      case 'step': {
        const { detail: _detail, ...rest } = this.#state;
        this.#state = { ...rest, text: event.caption, progress: `${event.index + 1}/${event.total}` };
        this.#notify();
        return;
      }
      case 'outcome':
        this.#set({ detail: event.ok ? event.brief : `FAIL ${event.text}` });
        return;
      case 'end':
        this.#set({
          text: event.failures === 0 ? 'The end. The same --seed tells this story again' : `The end, with ${event.failures} outcome(s) not as expected`,
          finished: true,
        });
    }
  };

  /** The story could not go on: the caption says why. */
  fail(message: string): void {
    this.#set({ text: `The demo stopped: ${message}`, finished: true });
  }

  #set(change: Partial<DemoCaptionState>): void {
    this.#state = { ...this.#state, ...change };
    this.#notify();
  }

  #notify(): void {
    for (const listener of this.#listeners) listener();
  }
}
