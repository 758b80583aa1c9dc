// Asks for the server's API key the first time a request is refused (401); the key is kept in
// localStorage, so the page asks once.
import { useEffect, useRef, useState } from "preact/hooks";
import { setKeyPrompt } from "./api.js";

export function KeyDialog() {
  const dialog = useRef<HTMLDialogElement>(null);
  const [reason, setReason] = useState("");
  const [key, setKey] = useState("");
  const resolver = useRef<((key: string | null) => void) | null>(null);

  useEffect(() => {
    setKeyPrompt(
      (why) =>
        new Promise((resolve) => {
          resolver.current?.(null);
          resolver.current = resolve;
          setReason(why);
          setKey("");
          dialog.current?.showModal();
        }),
    );
  }, []);

  const finish = (value: string | null) => {
    dialog.current?.close();
    resolver.current?.(value);
    resolver.current = null;
  };

  return (
    <dialog
      ref={dialog}
      class="key-dialog"
      aria-labelledby="key-title"
      onCancel={() => finish(null)}
    >
      <form
        method="dialog"
        onSubmit={(e) => {
          e.preventDefault();
          finish(key.trim() || null);
        }}
      >
        <h2 id="key-title">API key needed</h2>
        <p>
          This server was started with <code>--api-key</code>. {reason}
        </p>
        <label for="api-key">API key</label>
        <input
          id="api-key"
          type="password"
          autocomplete="current-password"
          value={key}
          onInput={(e) => setKey(e.currentTarget.value)}
        />
        <p class="note">Kept in this browser's localStorage; sent as a Bearer token.</p>
        <div class="buttons">
          <button type="submit">Use this key</button>
          <button type="button" onClick={() => finish(null)}>
            Cancel
          </button>
        </div>
      </form>
    </dialog>
  );
}
