import PXCore
import PXPlaces
import Synchronization

/// The config file as this process reads it: once, at its first use, then the same value for every part of
/// the command (the peer's backend, its connection, its identity, px-sync's places), so a file that changes
/// while a command runs cannot give two parts two answers. A command that never needs the config (px-dump,
/// px-listen without a named node) never reads it, so a broken file cannot fail it.
///
/// This is the one place a command reads the file (``PXConfig/load()``); library code takes a ``PXConfig``
/// value instead (``PlaceContext``).
public enum CommandConfig {
    private static let loaded = Mutex<Result<PXConfig, PXError>?>(nil)

    /// The config, read on the first call.
    /// - Throws: what ``PXConfig/load()`` threw, on this call and every later one.
    public static func value() throws(PXError) -> PXConfig {
        let result = loaded.withLock { cached in
            if let cached { return cached }
            let fresh: Result<PXConfig, PXError>
            do throws(PXError) { fresh = .success(try PXConfig.load()) } catch { fresh = .failure(error) }
            cached = fresh
            return fresh
        }
        return try result.get()
    }
}
