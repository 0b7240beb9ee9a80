import { type ComponentChildren, cloneElement, type JSX, type VNode } from "preact";
import { useEffect, useId, useRef, useState } from "preact/hooks";

export function ErrorNote({ message }: { message: string | undefined }) {
  if (!message) return null;
  return (
    <p class="error" role="alert">
      {message}
    </p>
  );
}

export function Busy({ label }: { label: string }) {
  return (
    <p class="busy" role="status">
      <span class="spinner" aria-hidden="true" /> {label}
    </p>
  );
}

export function Notice({ message }: { message: string | undefined }) {
  if (!message) return null;
  return (
    <p class="notice" role="status">
      {message}
    </p>
  );
}

type ButtonProps = JSX.HTMLAttributes<HTMLButtonElement> & {
  busy?: boolean;
  kind?: "primary" | "danger" | "plain";
  type?: "button" | "submit";
  disabled?: boolean;
};

/** A button that shows progress (and can't be pressed twice) while its action runs. */
export function Button({ busy, kind = "plain", children, disabled, type = "button", ...rest }: ButtonProps) {
  return (
    <button {...rest} type={type} class={`btn ${kind}`} disabled={disabled || busy} aria-busy={busy}>
      {busy && <span class="spinner" aria-hidden="true" />}
      {children}
    </button>
  );
}

export function Section(props: { title: string; actions?: ComponentChildren; children: ComponentChildren }) {
  const id = useId();
  return (
    <section class="card" aria-labelledby={id}>
      <header class="card-head">
        <h2 id={id}>{props.title}</h2>
        {props.actions && <div class="card-actions">{props.actions}</div>}
      </header>
      {props.children}
    </section>
  );
}

/**
 * A labelled control. The label points at the control (rather than wrapping it, which would
 * make a select's current option part of its name); the hint is the control's description.
 */
export function Field(props: { label: string; hint?: string; children: VNode }) {
  const id = useId();
  const hintId = `${id}-hint`;
  return (
    <div class="field">
      <label class="label" for={id}>
        {props.label}
      </label>
      {cloneElement(props.children, props.hint ? { id, "aria-describedby": hintId } : { id })}
      {props.hint && (
        <span class="hint" id={hintId}>
          {props.hint}
        </span>
      )}
    </div>
  );
}

async function copyText(text: string, from: HTMLInputElement | null): Promise<boolean> {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    // The Clipboard API needs a secure context and permission; the selection still works.
    if (!from) return false;
    from.select();
    return document.execCommand("copy");
  }
}

/** A value in a read-only box with a copy button. */
export function CopyField({ label, value, secret }: { label: string; value: string; secret?: boolean }) {
  const input = useRef<HTMLInputElement>(null);
  const [note, setNote] = useState("");
  return (
    <div class="copy">
      <Field label={label}>
        <input
          ref={input}
          readOnly
          value={value}
          class={secret ? "mono secret" : "mono"}
          spellcheck={false}
        />
      </Field>
      <Button
        onClick={async () =>
          setNote(
            (await copyText(value, input.current))
              ? "Copied."
              : "Could not copy: select the text and copy it.",
          )
        }
      >
        Copy
      </Button>
      <span class="hint" role="status">
        {note}
      </span>
    </div>
  );
}

/** A token or other secret Shoal shows once: it stays until the person dismisses it. */
export function ShownOnce(props: { label: string; value: string; onDone: () => void }) {
  return (
    <section class="once" aria-label={props.label}>
      <p>
        <strong>Copy it now:</strong> this is the only time it is shown. Shoal keeps only a hash of it.
      </p>
      <CopyField label={props.label} value={props.value} secret />
      <Button onClick={props.onDone}>I have copied it</Button>
    </section>
  );
}

/**
 * A destructive action behind a dialog that names what goes, and (for things holding data) asks
 * for the name to be typed, so a slip of the finger loses nothing.
 */
export function ConfirmButton(props: {
  label: string;
  title: string;
  body: ComponentChildren;
  typeToConfirm?: string;
  busy?: boolean;
  onConfirm: () => void;
}) {
  const dialog = useRef<HTMLDialogElement>(null);
  const [typed, setTyped] = useState("");
  const titleId = useId();
  useEffect(() => setTyped(""), [props.typeToConfirm]);
  const ok = !props.typeToConfirm || typed === props.typeToConfirm;
  return (
    <>
      <Button kind="danger" busy={props.busy} onClick={() => dialog.current?.showModal()}>
        {props.label}
      </Button>
      <dialog ref={dialog} aria-labelledby={titleId} class="dialog">
        <form
          method="dialog"
          onSubmit={(e) => {
            e.preventDefault();
            if (!ok) return;
            dialog.current?.close();
            props.onConfirm();
          }}
        >
          <h2 id={titleId}>{props.title}</h2>
          <div>{props.body}</div>
          {props.typeToConfirm && (
            <Field label={`Type ${props.typeToConfirm} to confirm`}>
              <input value={typed} onInput={(e) => setTyped(e.currentTarget.value)} autocomplete="off" />
            </Field>
          )}
          <div class="row">
            <Button onClick={() => dialog.current?.close()}>Cancel</Button>
            <Button type="submit" kind="danger" disabled={!ok}>
              {props.label}
            </Button>
          </div>
        </form>
      </dialog>
    </>
  );
}

/**
 * A named region that scrolls sideways inside itself on a narrow screen, never the page. It takes
 * keyboard focus so that people without a pointer can scroll it (WCAG 2.1.1; axe's
 * scrollable-region-focusable).
 */
export function ScrollRegion(props: { label: string; class?: string; children: ComponentChildren }) {
  return (
    // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrollable region must be reachable by keyboard
    <section class={props.class ?? "table-wrap"} aria-label={props.label} tabIndex={0}>
      {props.children}
    </section>
  );
}

/** A data table in a ScrollRegion. */
export function Table(props: {
  label: string;
  head: string[];
  numeric?: number[];
  children: ComponentChildren;
}) {
  return (
    <ScrollRegion label={props.label}>
      <table>
        <thead>
          <tr>
            {props.head.map((h, i) => (
              <th key={h} scope="col" class={props.numeric?.includes(i) ? "num" : undefined}>
                {h}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>{props.children}</tbody>
      </table>
    </ScrollRegion>
  );
}
