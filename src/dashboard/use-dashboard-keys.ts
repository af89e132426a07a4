/**
 * The dashboard's keys, wired to Ink: each key goes through `reduceKey` (dashboard-keys.ts), its
 * view is kept and the actions it asks for are run. Ink hands a run of characters read in one
 * chunk over as one input; each character is a key of its own and sees the view the key before it
 * left, which is why the view is read from and written to a ref here, not from the last render.
 */
import { useInput, type Key } from 'ink';
import type { DashboardActions } from './dashboard-actions.js';
import { reduceKey, type KeyAction } from './dashboard-keys.js';
import { resolveSelection, type ViewState } from './dashboard-view.js';
import type { FleetStore } from './fleet-store.js';
import { splitKeys } from './key-chunks.js';
import type { ScreenLayout } from './layout.js';

export interface DashboardKeysOptions {
  /** The view as the last key left it. */
  viewRef: { readonly current: ViewState };
  /** Changes the view at once (for the next key) and asks for a redraw. */
  changeView: (change: (current: ViewState) => ViewState) => void;
  /** The layout of the last render: a page is its table's rows. */
  layoutRef: { readonly current: ScreenLayout };
  tokensFor: (filter: string) => readonly string[];
  store: FleetStore;
  actions: DashboardActions;
  /** How many accounts `a` goes through. */
  accountCount: number;
  /** Log entries there are to scroll back through (search applied). */
  logEntryCount: () => number;
  /** Asked after a `/v1` fault is added or cleared, so the menu lists them as they now are. */
  onApiFaultsChanged: () => void;
  exit: () => void;
  /** Without a TTY on stdin there is no raw mode, and Ink throws if asked for it. */
  isActive: boolean;
}

export function useDashboardKeys(options: DashboardKeysOptions): void {
  const { viewRef, changeView, layoutRef, tokensFor, store, actions, exit, isActive } = options;

  /** Runs what a key asked for; false once the dashboard is quitting. */
  const run = (action: KeyAction): boolean => {
    switch (action.type) {
      case 'quit':
        exit();
        return false;
      case 'unlock':
        void actions.unlock(action.token, action.lockId, action.account);
        break;
      case 'toggleConnection':
      case 'toggleBattery':
      case 'reboot':
      case 'clearFaults':
        void actions[action.type](action.station);
        break;
      case 'toggleJam':
        void actions.toggleJam(action.station, action.lockId);
        break;
      case 'addFault':
        void actions.addFault(action.station, action.kind, action.lockId);
        break;
      case 'addApiFault':
        void actions.addApiFault(action.station, action.index).finally(options.onApiFaultsChanged);
        break;
      case 'clearApiFaults':
        void actions.clearApiFaults().finally(options.onApiFaultsChanged);
        break;
      case 'refreshApiFaults':
        options.onApiFaultsChanged();
        break;
    }
    return true;
  };

  /** Handles one key; false once the dashboard is quitting, so keys after it in a chunk do nothing. */
  const onKey = (input: string, key: Key): boolean => {
    const current = viewRef.current;
    const result = reduceKey(current, input, key, {
      layout: layoutRef.current,
      accountCount: options.accountCount,
      logEntryCount: options.logEntryCount(),
      selectionOf: (view) => resolveSelection(view, tokensFor(view.filter), store),
    });
    if (result.view !== current) changeView(() => result.view);
    for (const action of result.actions) if (!run(action)) return false;
    return true;
  };

  // Ink hands a run of characters read in one chunk over as one input ("jjj", "/102\r"): each
  // character is a key of its own, seeing the view the one before it left (hence viewRef).
  const onInput = (input: string, key: Key): void => {
    for (const press of splitKeys(input, key)) if (!onKey(press.input, press.key)) return;
  };

  useInput(onInput, { isActive });
}
