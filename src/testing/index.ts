/** Test-framework helpers: `import { withSimulator, startTestSimulator } from 'station-sim/testing'`. */
export { startTestSimulator, withSimulator, type TestSimulator, type SuiteHooks, type TimeoutHook, type OptionsHook } from './test-simulator.js';
