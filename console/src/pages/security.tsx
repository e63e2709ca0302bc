import { Page } from '../ui/components.tsx';

// Being built (issue 44).
export default function Placeholder() {
  return <Page title="security">Not built yet.</Page>;
}
