/**
 * The caption lines of a narrated run (`station-sim demo`): what the story is showing now, and
 * what its last action came to. The dashboard draws them above the fleet table when it is given a
 * `CaptionSource`; the source owns the story, this component only shows it and hands it its two
 * keys, `space` (pause or resume) and `n` (the next step now).
 *
 * Nothing here knows the story: the source is any object with this shape (src/demo/ makes one),
 * so the dashboard keeps importing nothing above its layer.
 */
import { useCallback, useRef, useSyncExternalStore } from 'react';
import { Box, Text, useInput, type Key } from 'ink';
import { splitKeys } from './key-chunks.js';

/** What the caption shows at one moment. */
export interface CaptionState {
  /** The narration of the step, one line (cut at the terminal's width). */
  text: string;
  /** Where the story is, shown before the text, e.g. `3/8`. @default none */
  progress?: string;
  /** What the step's last action came to, on the second line. @default none */
  detail?: string;
  /** Paused with `space`: shown as `PAUSED`. */
  paused: boolean;
  /** The story has ended: the keys do nothing more, and the hint says so. */
  finished: boolean;
}

/** A narrated story the dashboard shows and steers. */
export interface CaptionSource {
  /**
   * The state now; the same object until it changes (React compares it by identity). A function
   * property, not a method: React calls it detached.
   */
  current: () => CaptionState;
  /** Calls `listener` after each change; returns the unsubscribe function. Called detached, as `current`. */
  subscribe: (listener: () => void) => () => void;
  /** `space`: pause, or resume. */
  togglePause(): void;
  /** `n`: the next step now. */
  next(): void;
}

/** Lines the caption takes on the screen. */
export const CAPTION_LINES = 2;

export interface CaptionProps {
  source: CaptionSource;
  /** Whether there are keys to read at all: not without raw mode on stdin (Ink throws if asked). */
  keysActive: boolean;
  /**
   * Whether `space` and `n` are the story's now: not while the dashboard takes typed text (the `/`
   * filter) or shows an overlay. Asked at each key, so it should read the dashboard's latest view
   * (its ref), not the last render's.
   */
  keysFree: () => boolean;
}

export function Caption({ source, keysActive, keysFree }: CaptionProps) {
  const state = useSyncExternalStore(source.subscribe, source.current);
  const latest = useRef({ source, state, keysFree });
  latest.current = { source, state, keysFree };
  // One handler for the component's life: Ink calls input listeners in the order they subscribed,
  // and a handler that changed would subscribe again, after the dashboard's. Subscribed first, it
  // sees each chunk of keys before the dashboard acts on it, with the view as it was before.
  const onInput = useCallback((input: string, key: Key) => {
    const { source: story, state: now, keysFree: free } = latest.current;
    if (now.finished || !free()) return;
    // Several keys can arrive as one input ("nn" under key repeat): each counts. Any other key
    // may change what the keys mean (`/` starts a filter), so the rest of the chunk is the dashboard's.
    for (const press of splitKeys(input, key)) {
      if (press.key.ctrl || press.key.meta) return;
      if (press.input === ' ') story.togglePause();
      else if (press.input === 'n') story.next();
      else return;
    }
  }, []);
  useInput(onInput, { isActive: keysActive });
  const mark = state.finished ? 'END' : state.paused ? 'PAUSED' : 'PLAYING';
  // The keys first: a long detail is cut at the right edge, the keys never are.
  const hint = state.finished ? 'q quits' : state.paused ? 'space resume · n step' : 'space pause · n next';
  return (
    <Box flexDirection="column" width="100%">
      <Text wrap="truncate-end">
        {/* The state in words, not only in colour: it must read with NO_COLOR and in a capture. */}
        <Text bold inverse={state.paused}>{` ${mark}${state.progress ? ` ${state.progress}` : ''} `}</Text>
        <Text bold>{` ${state.text}`}</Text>
      </Text>
      <Text wrap="truncate-end" dimColor>
        {` ${hint}${state.detail ? ` │ ${state.detail}` : ''}`}
      </Text>
    </Box>
  );
}
