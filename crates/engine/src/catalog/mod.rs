//! The system catalog and the relation cache.

mod amcache;
mod model;
mod relcache;
mod store;

pub use amcache::AmCache;
pub use model::*;
pub use relcache::{IndexInfo, RelCache, RelEntry};
pub use store::{Catalog, CatalogError, NAME_MAX};
