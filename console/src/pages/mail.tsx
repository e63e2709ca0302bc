import { Page } from '../ui/components.tsx';

// Being built (issue 44).
export default function Placeholder() {
  return <Page title="mail">Not built yet.</Page>;
}
