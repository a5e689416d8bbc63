//! The system catalog and the relation cache.

mod amcache;
mod foreign_key;
mod index_key;
mod model;
mod relcache;
mod store;

pub use amcache::AmCache;
pub use foreign_key::{FkAction, ForeignKey, MAX_FK_COLUMNS};
pub use index_key::{IndexExprCompiler, IndexKey, IndexKeyExpr};
pub use model::*;
pub use relcache::{IndexInfo, RelCache, RelEntry};
pub use store::{Catalog, CatalogError, KeyPartSpec, INDEX_MAX_KEYS, NAME_MAX};
