import Link from "next/link";
import { EmptyState } from "./_components/page-parts";

/** A dashboard link to something that does not exist (an unknown call, session or backup). */
export default function NotFound() {
  return (
    <EmptyState title="Not found">
      Nothing has this id in the audit log (a session is found by its id or by its name). <Link className="underline" href="/">Back to the overview</Link>
    </EmptyState>
  );
}
