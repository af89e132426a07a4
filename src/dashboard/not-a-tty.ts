/**
 * Why the dashboard will not start here, in a module of its own: `up --dashboard on` says it before
 * anything starts, without loading Ink and React, which `up` loads only when it shows the dashboard.
 */

/** Said by `up --dashboard` and `dashboard` alike, so it names no option only one of them has (`up --json`). */
export const NOT_A_TTY_MESSAGE = 'the dashboard needs an interactive terminal (stdout is not a TTY); without one, use the control plane (/sim/v1) instead';
