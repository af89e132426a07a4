/**
 * The dashboard's `Text`: Ink's, except that its colours go when the terminal's user asked for none
 * (`NO_COLOR`, https://no-color.org). Bold, dim and inverse stay: they are not colours, and the
 * selection is drawn inverse. Every component of the dashboard takes `Text` from here.
 */
import { createContext, useContext } from 'react';
import { Text as InkText, type TextProps } from 'ink';

/** Whether the screen is drawn in colour; `startDashboard` sets it from `NO_COLOR`. */
export const ColourContext = createContext(true);

export function Text({ color, backgroundColor, ...rest }: TextProps) {
  const colour = useContext(ColourContext);
  return colour ? <InkText color={color} backgroundColor={backgroundColor} {...rest} /> : <InkText {...rest} />;
}

/** Whether `env` asks for no colour: `NO_COLOR` set to anything but the empty string. */
export function noColourRequested(env: Readonly<Record<string, string | undefined>>): boolean {
  const value = env['NO_COLOR'];
  return value !== undefined && value !== '';
}
