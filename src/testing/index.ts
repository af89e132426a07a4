/** Test-framework helpers: `import { withSimulator, startTestSimulator } from 'station-sim/testing'`. */
export { startTestSimulator, withSimulator, type TestSimulator, type SuiteHooks } from './test-simulator.js';
