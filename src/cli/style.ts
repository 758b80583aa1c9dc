// Terminal colours for CLI output, switched off when stdout is not a TTY or NO_COLOR is set,
// so piped output stays plain text.
const enabled = process.stdout.isTTY === true && !process.env.NO_COLOR;

function wrap(open: number, close: number): (text: string) => string {
  return (text) => (enabled ? `\x1b[${open}m${text}\x1b[${close}m` : text);
}

export const paint = {
  bold: wrap(1, 22),
  dim: wrap(2, 22),
  red: wrap(31, 39),
  green: wrap(32, 39),
  yellow: wrap(33, 39),
  cyan: wrap(36, 39),
};
