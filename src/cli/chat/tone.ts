// Colours of the chat screen, chosen per stream: the TTY view paints, the plain view (pipes,
// --no-tty, NO_COLOR) gets identity functions so no escape code is ever written.
import type { Styler } from "./live-area.js";

export interface Tone {
  bold: Styler;
  dim: Styler;
  red: Styler;
  green: Styler;
  yellow: Styler;
  cyan: Styler;
  magenta: Styler;
  /** Code inside a region. */
  code: Styler;
  /** A VM result. */
  vm: Styler;
}

function wrap(open: string, close: string): Styler {
  return (text) => `\x1b[${open}m${text}\x1b[${close}m`;
}

export function makeTone(colour: boolean): Tone {
  if (!colour) {
    const id: Styler = (t) => t;
    return {
      bold: id,
      dim: id,
      red: id,
      green: id,
      yellow: id,
      cyan: id,
      magenta: id,
      code: id,
      vm: id,
    };
  }
  return {
    bold: wrap("1", "22"),
    dim: wrap("2", "22"),
    red: wrap("31", "39"),
    green: wrap("32", "39"),
    yellow: wrap("33", "39"),
    cyan: wrap("36", "39"),
    magenta: wrap("35", "39"),
    code: wrap("36", "39"),
    vm: wrap("1;32", "22;39"),
  };
}
