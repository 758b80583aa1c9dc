// Runs C, Lisp and CALC in Ruffian's sandbox, without a model.
// node examples/api/run-code.mjs
import { runC, runLisp, runCalc, VmSession } from "ruffian";

// One C block in a fresh sandbox: an expression, or a whole program with main().
console.log(runC("847*293").text); // 248171
const program = runC(`
int main() {
  for (int i = 1; i <= 3; i++) printf("%d squared is %d\\n", i, i * i);
  return 0;
}`);
process.stdout.write(program.text);

// Errors come back as values, with a line and column.
const broken = runC("int x = ;");
if (!broken.ok)
  console.log(`error at ${broken.error.line}:${broken.error.column}: ${broken.error.message}`);

// A session keeps functions, globals and memory[] from one block to the next.
const session = new VmSession();
session.run("int square(int x) { return x * x; }");
console.log(session.run("square(12)").text); // 144

console.log(runLisp("(fact 30)").text); // 265252859812191058636308480000000
console.log(runCalc("7*6").text); // 42
