/** The broker matrix (broker-matrix.ts) against the mosquitto broker. */
import { describeBrokerMatrix } from './broker-matrix.js';

describeBrokerMatrix('mosquitto');
