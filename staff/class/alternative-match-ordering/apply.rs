//! NOT A MUTANT: a correct alternative to the reference.
//! Changed from the reference: different control flow. The input is validated in one
//! `if … else if … else` chain; the generation is judged by one `match` on `Ordering`; the
//! record lookup is one `match` with a guard; the success path is the last arm of nested
//! matches instead of the fall-through after early returns.
//! Still correct: every decision is the reference's, in the same order, in the same
//! transaction; only the shape of the code differs.
//! The graded suite must give it full marks (see staff/class/gradebook.csv).

use std::cmp::Ordering;

use crate::TransactionBehavior;

use crate::{Destination, LabError, Outcome, Record};

/// Applies `delta` to `resource` for the worker holding `generation`, once
/// per `request_id`.
pub fn apply(
    db: &mut Destination,
    resource: &str,
    generation: i64,
    request_id: &str,
    delta: i64,
) -> Result<Outcome, LabError> {
    if request_id.is_empty() {
        Err(LabError::EmptyRequestId)
    } else if generation < 1 {
        Err(LabError::GenerationBelowOne(generation))
    } else {
        let tx = db.begin(TransactionBehavior::Immediate)?;
        let installed = tx.installed_generation(resource)?;
        match generation.cmp(&installed) {
            Ordering::Less => Err(LabError::Stale {
                presented: generation,
                installed,
            }),
            Ordering::Greater => Err(LabError::NeverIssued {
                presented: generation,
                installed,
            }),
            Ordering::Equal => match tx.find_record(resource, request_id)? {
                Some(record) if record.delta == delta => Ok(Outcome::Replayed {
                    result: record.result,
                }),
                Some(record) => Err(LabError::Conflict {
                    request_id: request_id.to_owned(),
                    recorded_delta: record.delta,
                    presented_delta: delta,
                }),
                None => {
                    let value = tx.value(resource)?;
                    match value.checked_add(delta) {
                        None => Err(LabError::Overflow { value, delta }),
                        Some(result) => {
                            tx.set_value(resource, result)?;
                            tx.insert_record(&Record {
                                resource: resource.to_owned(),
                                request_id: request_id.to_owned(),
                                delta,
                                result,
                                generation,
                            })?;
                            tx.commit().map(|()| Outcome::Applied { result })
                        }
                    }
                }
            },
        }
    }
}
