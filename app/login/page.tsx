import { LoginForm } from "./login-form";

/** Reviewer sign-in. */
export default function LoginPage() {
  return (
    <main className="mx-auto flex min-h-screen max-w-sm flex-col justify-center px-6">
      <h1 className="mb-1 text-2xl font-semibold">Agent Reach</h1>
      <p className="mb-6 text-sm text-zinc-500">Sign in to review your agents&apos; calls.</p>
      <LoginForm />
    </main>
  );
}
