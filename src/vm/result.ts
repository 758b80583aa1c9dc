// The VM's outcome shapes are the ones every in-band language shares (src/outcome.ts); vm/
// re-exports them so that importers of the VM see one surface.
export * from "../outcome.js";
