import { Page } from '../ui/components.tsx';

// Being built (issue 44).
export default function Placeholder() {
  return <Page title="sessions">Not built yet.</Page>;
}
