// The experiments' C programs are bundled as text (esbuild's "text" loader for .c files).
declare module "*.c" {
  const source: string;
  export default source;
}
