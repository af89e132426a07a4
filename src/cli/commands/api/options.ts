/** `api`'s options, in the order --help lists them, and the flags its handler sees. */
import { FIXTURE_OPTIONS, HOST_OPTIONS, HTTP_OPTIONS, JSON_OPTIONS, REQUIRED_BROKER_OPTIONS, type FlagsOf, type OptionGroup } from '../../options.js';

/** `api`'s options, in the order --help lists them. */
export const API_OPTIONS = { ...FIXTURE_OPTIONS, ...JSON_OPTIONS, ...HOST_OPTIONS, ...REQUIRED_BROKER_OPTIONS, ...HTTP_OPTIONS } as const satisfies OptionGroup;

/** The flags `api`'s handler sees. */
export type ApiFlags = FlagsOf<typeof API_OPTIONS>;
