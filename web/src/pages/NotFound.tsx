// The page for a path the console does not have.
import { Link } from 'react-router';

export function NotFound() {
  return (
    <div className="page">
      <div className="state state-empty">
        <strong>Page not found</strong>
        <p>
          There is no such page in the console. <Link to="/">Go to the overview</Link>.
        </p>
      </div>
    </div>
  );
}
