module scalegnn

go 1.24

require (
	github.com/BurntSushi/toml v1.6.0
	go.uber.org/zap v1.28.0
)

require go.uber.org/multierr v1.10.0 // indirect
