/**
 * The dashboard on a fake control plane (fake-control-plane.ts), rendered by ink-testing-library
 * with the short intervals the tests wait on and ASCII icons, as the screen tests drive it.
 */
import { render } from 'ink-testing-library';
import { ControlClient } from '../../src/client/control-client.js';
import { Dashboard, type DashboardProps } from '../../src/dashboard/Dashboard.js';
import { FleetStore } from '../../src/dashboard/fleet-store.js';
import { ASCII_ICONS } from '../../src/dashboard/format.js';
import { systemClock } from '../../src/shared/clock.js';
import type { FakeControlPlane } from './fake-control-plane.js';
import { settle, stripAnsi } from './terminal.js';

export interface RenderedDashboard {
  /** The last frame drawn, without colours. */
  frame(): string;
  /** Types `keys`, then lets Ink handle them. */
  press(...keys: string[]): Promise<void>;
  unmount(): void;
}

/** Renders the dashboard of `fake`; `props` replace the defaults (a new FleetStore, the system clock, …). */
export function renderDashboard(fake: FakeControlPlane, props: Partial<DashboardProps> = {}): RenderedDashboard {
  const view = render(
    <Dashboard
      control={new ControlClient({ url: fake.url })}
      store={new FleetStore()}
      clock={systemClock}
      icons={ASCII_ICONS}
      title={fake.url}
      flushIntervalMs={10}
      healthPollMs={20}
      detailRefreshMs={50}
      {...props}
    />,
  );
  return {
    frame: () => stripAnsi(view.lastFrame() ?? ''),
    press: async (...keys) => {
      for (const key of keys) view.stdin.write(key);
      // A lone Escape is held by Ink for one setImmediate, to tell it from an escape sequence.
      await settle();
    },
    unmount: view.unmount,
  };
}
