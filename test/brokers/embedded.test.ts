/** The broker matrix (broker-matrix.ts) against the embedded broker. */
import { describeBrokerMatrix } from './broker-matrix.js';

describeBrokerMatrix('embedded');
