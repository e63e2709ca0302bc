import { Page } from '../ui/components.tsx';

// Being built (issue 44).
export default function Placeholder() {
  return <Page title="time-travel">Not built yet.</Page>;
}
